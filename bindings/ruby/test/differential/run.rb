# frozen_string_literal: true

# The differential test's outer half (make test-ruby-differential, root):
# brings the test bed up with `hev2-testbed up` (its client namespace
# resolves the scenario names `<row>.hev2.test` through the bed's DNS
# server), runs differential.rb with this Ruby inside the client namespace,
# and removes the bed (SIGTERM to the hev2-testbed it started). Names are
# only ever resolved inside the bed.
#
#   ruby run.rb HEV2_TESTBED_BINARY [EXTRA_LOAD_PATH...]

require "rbconfig"

testbed = ARGV.shift or abort "usage: run.rb PATH/hev2-testbed [-IDIR...]"
load_path = ARGV.dup
unless Process.uid.zero?
  puts "SKIP: the differential test needs root (the test bed's network namespaces)"
  exit 0
end

out_r, out_w = IO.pipe
bed = Process.spawn(testbed, "up", out: out_w, err: $stderr)
out_w.close
ns = port = nil
begin
  out_r.each_line do |line|
    ns = Regexp.last_match(1) if line =~ /\Aclient namespace: (\S+)/
    port = Regexp.last_match(1) if line =~ /listeners on port (\d+)/
    break if line.start_with?("scenario names are served")
  end
  abort "run.rb: #{testbed} up did not report its client namespace and port" unless ns && port

  lib = File.expand_path("../../lib", __dir__)
  test = File.expand_path("..", __dir__)
  argv = ["ip", "netns", "exec", ns, RbConfig.ruby, "-w", "-I#{lib}", "-I#{test}", *load_path,
          File.join(__dir__, "differential.rb"), port]
  ok = system(*argv)
ensure
  Process.kill(:TERM, bed)
  Process.wait(bed)
  out_r.close
end
exit(ok ? 0 : 1)

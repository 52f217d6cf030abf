# frozen_string_literal: true

require "json"
require "monitor"

# The project's test DNS server for the tests: Go's tests/testdns, run
# as the hev2-testdns command (tests/cmd/hev2-testdns), a child process of
# the test. Per name and query type it answers addresses (at once or after
# a delay), NXDOMAIN, SERVFAIL, NODATA, or never; it records the queries it
# got. A name with no entry is NXDOMAIN, a type a known name has no entry
# for NODATA.
#
# The server is ready when new returns: it has printed the address it
# serves on (UDP and TCP). It stops on close, and on its own when this
# process ends (its stdin closes), so it never outlives a test.
#
# The command is $HEV2_TESTDNS (mk/ruby.mk sets it), or else the
# checkout's build/hev2-testdns (`make testdns`).
class TestDNSServer
  BINARY = ENV.fetch("HEV2_TESTDNS") { File.expand_path("../../../build/hev2-testdns", __dir__) }

  attr_reader :address

  def initialize(ip = "127.0.0.1", port = 53)
    listen = ip.include?(":") ? "[#{ip}]:#{port}" : "#{ip}:#{port}"
    raise "no #{BINARY}: build it with `make testdns` (or set HEV2_TESTDNS)" unless File.executable?(BINARY)

    @io = IO.popen([BINARY, "-listen", listen], "r+")
    @io.sync = true
    @address = @io.gets&.chomp
    @lock = Monitor.new
    @seen = 0
    return if @address

    close
    raise "#{BINARY} -listen #{listen} exited (#{$?.exitstatus}) before serving"
  end

  # type: "AAAA" or "A". One of: addrs: [...], nxdomain: true, servfail:
  # true, nodata: true, never: true; delay: seconds before answering.
  def set(name, type, addrs: nil, nxdomain: false, servfail: false, nodata: false, never: false, delay: 0)
    entry = { "addrs" => nodata ? [] : addrs || [], "never" => never, "delay" => delay }
    entry["rcode"] = "NXDOMAIN" if nxdomain
    entry["rcode"] = "SERVFAIL" if servfail
    command("zone" => { name => { type => entry } })
  end

  # The queries received since the last call, [name, type] each, oldest
  # first.
  def query_log
    @lock.synchronize do
      all = command("queries" => true)["queries"].map { |q| [q["name"], q["type"]] }
      all.drop(@seen).tap { @seen = all.size }
    end
  end

  def close
    return if @io.closed?

    @io.close_write
    @io.read # until it exits
    @io.close
  end

  private

  def command(cmd)
    line = @lock.synchronize do
      @io.puts(JSON.generate(cmd))
      @io.gets
    rescue IOError, SystemCallError
      nil
    end
    raise "hev2-testdns exited" unless line

    reply = JSON.parse(line)
    raise ArgumentError, "hev2-testdns: #{reply["error"]} (command #{cmd})" if reply["error"]

    reply
  end
end

# frozen_string_literal: true

# Read on stdin by scripts/test-dist-ruby.sh (so that no file of a checkout
# is on any path), run from / with only a scratch GEM_HOME where a gem of
# `make dist-ruby` was installed, and no HEV2_LIBRARY or RUBYLIB: the gem of
# HEV2_EXPECT_PLATFORM must load the libhev2.so it carries or built, connect
# with Hev2.tcp, and connect again through Socket.tcp and TCPSocket.new once
# hev2/replace is required. With HEV2_EXPECT_EXT=1 its C extension must
# have been built at install and be used; with 0 (no compiler at install)
# it must be absent, and the gem work without it.
require "socket"

def fail!(why)
  abort "gem_smoke: #{why}"
end

%w[HEV2_LIBRARY RUBYLIB RUBYOPT].each { |v| fail!("#{v} is set") if ENV.key?(v) }
gem "hev2"
require "hev2"

spec = Gem.loaded_specs.fetch("hev2")
want = ENV.fetch("HEV2_EXPECT_PLATFORM")
fail!("the installed gem is #{spec.full_name}, platform #{spec.platform}, not #{want}") unless spec.platform.to_s == want
fail!("Hev2::VERSION #{Hev2::VERSION}, gem #{spec.version}") unless spec.version.to_s == Hev2::VERSION

lib = Hev2.library[:path]
homes = [spec.full_gem_path, spec.extension_dir].map { |d| File.join(d, "") }
fail!("loaded #{lib}, not a copy inside #{spec.full_name}") unless homes.any? { |d| lib.start_with?(d) }
checkout = ENV.fetch("HEV2_CHECKOUT")
from_checkout = ($LOADED_FEATURES + $LOAD_PATH + [lib]).grep(/\A#{Regexp.escape(File.join(checkout, ""))}/)
fail!("files of the checkout are loaded: #{from_checkout.first(3).join(", ")}") unless from_checkout.empty?
case ENV.fetch("HEV2_EXPECT_EXT")
when "1" then fail!("the gem's C extension (Hev2::NoGVL) was not built at install or not loaded") unless Hev2::NoGVL.available?
when "0" then fail!("the gem's C extension is loaded, but no compiler was on PATH at install") if Hev2::NoGVL.available?
end

server = TCPServer.new("127.0.0.1", 0)
port = server.addr[1]

# One connect: the client's peer is the listener, the listener's peer the client.
def check_connect(how, server, port)
  sock = yield
  peer = server.accept
  fail!("#{how}: connected to #{sock.remote_address.inspect}") unless sock.remote_address.ip_port == port
  fail!("#{how}: the listener accepted #{peer.remote_address.inspect}") unless peer.remote_address.ip_port == sock.local_address.ip_port
  sock.close
  peer.close
end

# Each connect through hev2 makes one handle: the library's count of them.
def handles_created
  Hev2.stats.fetch(:handles_created)
end

check_connect("Hev2.tcp", server, port) { Hev2.tcp("127.0.0.1", port) }
require "hev2/replace"
{ "Socket.tcp" => -> { Socket.tcp("127.0.0.1", port) },
  "TCPSocket.new" => -> { TCPSocket.new("127.0.0.1", port) } }.each do |how, connect|
  before = handles_created
  check_connect("#{how} after hev2/replace", server, port, &connect)
  fail!("#{how} after hev2/replace did not go through hev2 (handles created #{before} -> #{handles_created})") unless handles_created == before + 1
end

puts "gem_smoke: #{spec.full_name} on Ruby #{RUBY_VERSION}: #{lib.delete_prefix(File.join(Gem.dir, ""))}, " \
     "Hev2.tcp, Socket.tcp and TCPSocket.new (hev2/replace) connected " \
     "(#{Hev2::NoGVL.available? ? "C extension" : "no C extension"})"

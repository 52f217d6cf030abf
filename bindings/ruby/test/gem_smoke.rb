# frozen_string_literal: true

# Run by `make package-ruby` from / with GEM_HOME pointing at a throwaway home
# where the built gem was installed, and no HEV2_LIBRARY: the gem must load
# the libhev2.so it carries and connect.
require "socket"
gem "hev2"
require "hev2"

lib = Hev2.library[:path]
abort "gem_smoke: loaded #{lib}, not the copy inside the gem" unless lib.include?("/gems/hev2-")
if ENV["HEV2_EXPECT_EXT"] == "1" && !Hev2::NoGVL.available?
  abort "gem_smoke: the gem's C extension (Hev2::NoGVL) was not built or not loaded"
end
srv = TCPServer.new("127.0.0.1", 0)
peer = Hev2.tcp("127.0.0.1", srv.addr[1]) { |s| s.remote_address.ip_address }
abort "gem_smoke: connected to #{peer.inspect}" unless peer == "127.0.0.1"
puts "gem_smoke: hev2 #{Hev2::VERSION} from #{lib} connected " \
     "(#{Hev2::NoGVL.available? ? "on the caller's thread, C extension" : "eventfd wait, no C extension"})"

# frozen_string_literal: true

require_relative "lib/hev2/version"

# The gem is Ruby over libhev2.so (through Fiddle, part of Ruby), plus a
# small C extension built at install (ext/hev2_wait: hev2_wait without the
# GVL, interruptible); where it cannot be built the gem works without it. When
# the library has been copied to lib/hev2/native/ (`make package-ruby` does so in
# a staging copy) it is shipped inside the gem, and the gem becomes a
# platform gem for this machine's platform.
Gem::Specification.new do |spec|
  spec.name = "hev2"
  spec.version = Hev2::VERSION
  spec.summary = "Happy Eyeballs v2 (RFC 8305) Socket.tcp that never holds the GVL"
  spec.description = <<~DESC
    Hev2.tcp is a drop-in for Socket.tcp backed by libhev2: IPv6 and IPv4
    are resolved and raced as RFC 8305 says, on every Ruby from 3.1, and the
    wait releases the GVL and can be interrupted (Timeout, Thread#raise,
    Ctrl-C) or scheduled by a Fiber scheduler. `require "hev2/replace"` makes
    Socket.tcp and TCPSocket.new use it.
  DESC
  spec.authors = ["hev2 authors"]
  spec.license = "MIT"
  spec.homepage = "https://example.invalid/hev2"
  spec.required_ruby_version = ">= 3.1"

  spec.files = Dir.chdir(__dir__) do
    Dir["lib/**/*.rb", "README.md", "ext/hev2_wait/*.{rb,c}"] + Dir["lib/hev2/native/libhev2.so"]
  end
  spec.extensions = ["ext/hev2_wait/extconf.rb"]
  spec.require_paths = ["lib"]
  spec.platform = Gem::Platform.local if spec.files.include?("lib/hev2/native/libhev2.so")
end

# frozen_string_literal: true

require_relative "lib/hev2/version"

# One gemspec for the three gems of `make dist-ruby` (mk/dist-ruby.mk),
# chosen by HEV2_GEM_PLATFORM, each built in a staging copy of this
# directory that scripts/dist-ruby-gems.sh fills:
#
#   x86_64-linux, aarch64-linux  libhev2.so of that architecture inside
#                                (lib/hev2/native/libhev2.so)
#   ruby                         the library's Go module (ext/libhev2/go, its
#                                dependencies vendored), built at install by
#                                ext/libhev2/extconf.rb when Go is present
#
# Every gem is Ruby over libhev2.so (through Fiddle, part of Ruby), plus the
# source of a small C extension built at install (ext/hev2_wait: hev2_wait
# without the GVL, interruptible); where it cannot be built the gem works
# without it. licenses/ holds the licences of what the library links in
# (the Go runtime and modules).
PLATFORMS = %w[x86_64-linux aarch64-linux ruby].freeze
PROJECT_URL = "https://github.com/hev2/hev2"

platform = ENV.fetch("HEV2_GEM_PLATFORM", "")
unless PLATFORMS.include?(platform)
  raise ArgumentError, "hev2.gemspec: set HEV2_GEM_PLATFORM to one of #{PLATFORMS.join(", ")} " \
                       "(`make dist-ruby` builds the gems), not #{platform.inspect}"
end

# What the platform's gem cannot be without (the staging copy must have it).
required = if platform == "ruby"
             %w[ext/libhev2/extconf.rb ext/libhev2/go/go.mod ext/libhev2/go/vendor/modules.txt]
           else
             %w[lib/hev2/native/libhev2.so]
           end
files = Dir.chdir(__dir__) do
  missing = required.reject { |f| File.file?(f) }
  missing << "licenses/" if Dir["licenses/**/*"].empty?
  unless missing.empty?
    raise ArgumentError, "hev2.gemspec: the #{platform} gem needs #{missing.join(", ")}: build the gems with `make dist-ruby`"
  end

  carried = platform == "ruby" ? Dir.glob("ext/libhev2/go/**/*", File::FNM_DOTMATCH) : []
  (Dir["lib/**/*.rb", "README.md", "CHANGELOG.md", "ext/hev2_wait/*.{rb,c}", "licenses/**/*"] + required + carried)
    .select { |f| File.file?(f) }.uniq.sort
end

Gem::Specification.new do |spec|
  spec.name = "hev2"
  spec.version = Hev2::VERSION
  spec.platform = platform == "ruby" ? Gem::Platform::RUBY : Gem::Platform.new(platform)
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
  spec.homepage = PROJECT_URL
  spec.metadata = {
    "homepage_uri" => PROJECT_URL,
    "source_code_uri" => PROJECT_URL,
    "documentation_uri" => "#{PROJECT_URL}/blob/main/bindings/ruby/README.md",
    "changelog_uri" => "#{PROJECT_URL}/blob/main/CHANGELOG.md",
    "bug_tracker_uri" => "#{PROJECT_URL}/issues",
    "rubygems_mfa_required" => "true",
  }
  spec.required_ruby_version = ">= 3.1"

  spec.files = files
  spec.require_paths = ["lib"]
  # The library first: a source gem that cannot build it fails there.
  spec.extensions = (platform == "ruby" ? ["ext/libhev2/extconf.rb"] : []) + ["ext/hev2_wait/extconf.rb"]
  if platform == "ruby"
    go = File.read(File.join(__dir__, "ext/libhev2/go/go.mod"))[/^go (\S+)/, 1]
    spec.requirements = ["Go #{go} or newer and a C compiler, to build libhev2.so at install " \
                         "(the x86_64-linux and aarch64-linux gems carry it built)"]
  end
end

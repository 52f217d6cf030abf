# frozen_string_literal: true

# Run by scripts/test-dist-ruby.sh: the specifications and contents of the
# three gems of `make dist-ruby` in DIST_DIR, without installing them.
#
#   ruby check_gems.rb DIST_DIR VERSION
require "rubygems/package"

dist, version = ARGV
abort "usage: check_gems.rb DIST_DIR VERSION" unless dist && version

LIB = "lib/hev2/native/libhev2.so"
GO = "ext/libhev2/go/"
URIS = %w[homepage_uri source_code_uri documentation_uri changelog_uri bug_tracker_uri].freeze

failures = []
{ "x86_64-linux" => "hev2-#{version}-x86_64-linux.gem",
  "aarch64-linux" => "hev2-#{version}-aarch64-linux.gem",
  "ruby" => "hev2-#{version}.gem" }.each do |platform, name|
  path = File.join(dist, name)
  unless File.file?(path)
    failures << "#{name}: missing"
    next
  end
  spec = Gem::Package.new(path).spec
  files = spec.files
  bad = ->(why) { failures << "#{name}: #{why}" }

  bad.("platform #{spec.platform}") unless spec.platform.to_s == platform
  bad.("version #{spec.version}") unless spec.version.to_s == version
  bad.("licenses #{spec.licenses.inspect}") unless spec.licenses == ["MIT"]
  bad.("required_ruby_version #{spec.required_ruby_version}") unless spec.required_ruby_version.to_s == ">= 3.1"
  bad.("homepage #{spec.homepage.inspect}") unless spec.homepage.to_s.start_with?("https://")
  URIS.each { |k| bad.("metadata #{k} #{spec.metadata[k].inspect}") unless spec.metadata[k].to_s.start_with?("https://") }
  %w[lib/hev2.rb lib/hev2/replace.rb ext/hev2_wait/hev2_wait.c CHANGELOG.md licenses/go/LICENSE].each do |f|
    bad.("no #{f}") unless files.include?(f)
  end
  bad.("no licence of golang.org/x/sys") unless files.any? { |f| f.start_with?("licenses/golang.org/x/sys/") }
  bad.("carries tests: #{files.grep(%r{(\A|/)(test|bench)/|_test\.go\z|/testdata/}).first(3)}") if
    files.any? { |f| f.match?(%r{(\A|/)(test|bench)/|_test\.go\z|/testdata/}) }

  if platform == "ruby"
    bad.("extensions #{spec.extensions}") unless spec.extensions == %w[ext/libhev2/extconf.rb ext/hev2_wait/extconf.rb]
    bad.("carries a library: #{files.grep(/\.so\z/)}") unless files.grep(/\.so\z/).empty?
    %w[go.mod go.sum include/hev2.h capi/hev2.map capi/main.go core/api.go vendor/modules.txt
       vendor/golang.org/x/sys/unix/syscall_linux.go].each do |f|
      bad.("no #{GO}#{f}") unless files.include?(GO + f)
    end
    bad.("no requirement naming Go") unless spec.requirements.any? { |r| r.include?("Go ") }
  else
    bad.("extensions #{spec.extensions}") unless spec.extensions == %w[ext/hev2_wait/extconf.rb]
    bad.("no #{LIB}") unless files.include?(LIB)
    bad.("carries Go sources") if files.any? { |f| f.start_with?(GO) }
  end
  puts format("check_gems: %-32s %7.2f MB, platform %s, %d files", name, File.size(path) / 1e6, spec.platform, files.size)
end
abort failures.map { |f| "check_gems: #{f}" }.join("\n") unless failures.empty?

# frozen_string_literal: true

# The source gem (platform "ruby") builds libhev2.so at install from the Go
# module it carries in go/ (the library's packages, with their dependencies
# vendored: the build needs no network and no module cache). The platform
# gems carry the library built already and do not run this.
#
# This checks what the build needs (Go of go.mod's version, a C compiler for
# cgo) and fails with one line naming what is missing; then it writes a
# Makefile whose `make` runs `go build -buildmode=c-shared` with the flags
# of `make capi-lib` (SONAME, version script) and whose `make install` puts
# the library in hev2/native/ of the gem's extension directory, where
# lib/hev2/library.rb looks. Go's build cache ($GOCACHE) makes a reinstall
# quick.
require "rbconfig"
require "shellwords"

module Hev2LibraryBuild
  MODULE_DIR = "go"
  PLATFORM_GEMS = "x86_64-linux or aarch64-linux"

  module_function

  def fail!(what)
    abort "hev2: building libhev2.so from source needs #{what}; install it, " \
          "or install a platform gem of hev2 (#{PLATFORM_GEMS}), which carries the library"
  end

  def go_version_needed
    File.read(File.join(MODULE_DIR, "go.mod"))[/^go (\d+(?:\.\d+)*)/, 1] or
      abort "hev2: #{MODULE_DIR}/go.mod has no go line (the gem is damaged)"
  end

  def on_path(name)
    return name if name.include?("/") && File.executable?(name)

    ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, name) }
       .find { |f| File.file?(f) && File.executable?(f) }
  end

  # `go env NAME` of the go found, without the user's GOFLAGS (a -mod flag
  # there would be checked against a module that is not theirs).
  def go_env(go, name)
    out = IO.popen({ "GOFLAGS" => nil, "GOTOOLCHAIN" => "local" }, [go, "env", name], err: File::NULL, &:read)
    $?.success? ? out.strip : nil
  end

  def check_go(need)
    go = on_path("go") or fail!("Go #{need} or newer (go.mod) and no `go` is on PATH")
    have = go_env(go, "GOVERSION").to_s
    number = have[/\Ago(\d+(?:\.\d+)*)/, 1]
    if number.nil? || Gem::Version.new(number) < Gem::Version.new(need)
      fail!("Go #{need} or newer (go.mod) and #{go} is #{have.empty? ? "not a working Go" : have}")
    end
    go
  end

  def check_cc(go)
    cc = go_env(go, "CC").to_s.shellsplit.first || "gcc"
    on_path(cc) or fail!("a C compiler for cgo (#{cc}, from `go env CC`) and none was found")
  end

  def soname_major
    File.read(File.join(MODULE_DIR, "include/hev2.h"))[/^#define HEV2_VERSION_MAJOR (\d+)/, 1] or
      abort "hev2: #{MODULE_DIR}/include/hev2.h has no HEV2_VERSION_MAJOR (the gem is damaged)"
  end

  # The go build command, as one shell line for the Makefile. The version
  # script's path is absolute (the linker runs in another directory) and
  # quoted as Go's -ldflags and -extldflags read quotes: a whole field.
  def build_command(go)
    map = File.expand_path(File.join(MODULE_DIR, "capi/hev2.map"))
    abort "hev2: the gem's path #{map} has a quote in it; install it elsewhere" if map =~ /["']/

    extld = %(-Wl,-soname,libhev2.so.#{soname_major} "-Wl,--version-script=#{map}")
    ldflags = %(-s -extldflags '#{extld}')
    # GOFLAGS=-mod=vendor: the modules come from go/vendor, so GOPROXY=off
    # holds; GOTOOLCHAIN=local: the Go found was checked, none is fetched.
    env = %w[CGO_ENABLED=1 GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local]
    argv = [go, "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false",
            "-ldflags=#{ldflags}", "-o", "../libhev2.so", "./capi"]
    "cd #{MODULE_DIR} && env #{env.join(" ")} #{argv.shelljoin}".gsub("$", "$$")
  end

  def makefile(go)
    <<~MAKE
      # Written by extconf.rb (hev2): builds libhev2.so from #{MODULE_DIR}/ with Go.
      sitearchdir = #{RbConfig::CONFIG.fetch("sitearchdir")}
      DESTDIR =

      all: libhev2.so

      libhev2.so:
      \t#{build_command(go)}
      \trm -f libhev2.h

      install: libhev2.so
      \tmkdir -p $(DESTDIR)$(sitearchdir)/hev2/native
      \tcp libhev2.so $(DESTDIR)$(sitearchdir)/hev2/native/libhev2.so

      clean:
      \trm -f libhev2.so libhev2.h

      .PHONY: all install clean
    MAKE
  end
end

Dir.exist?(Hev2LibraryBuild::MODULE_DIR) or
  abort "hev2: ext/libhev2/#{Hev2LibraryBuild::MODULE_DIR} is missing: build the gem with `make dist-ruby`"
go = Hev2LibraryBuild.check_go(Hev2LibraryBuild.go_version_needed)
Hev2LibraryBuild.check_cc(go)
File.write("Makefile", Hev2LibraryBuild.makefile(go))

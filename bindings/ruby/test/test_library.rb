# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require "tmpdir"
require "fileutils"

# Finding libhev2.so: the error names every place tried.
class TestLibrary < Minitest::Test
  LIB = File.expand_path("../lib", __dir__)

  def load_with(env, lib_dir = LIB)
    out = IO.popen(env, [RbConfig.ruby, "-I#{lib_dir}", "-e", 'require "hev2"; print Hev2.library[:path]'],
                   err: %i[child out], &:read)
    [$?.success?, out]
  end

  def test_an_explicit_path_that_does_not_exist_is_named
    ok, out = load_with({ "HEV2_LIBRARY" => "/nonexistent/libhev2.so" })
    refute ok
    assert_includes out, "Hev2::LibraryError"
    assert_includes out, "/nonexistent/libhev2.so (no such file)"
  end

  def test_a_file_that_is_not_a_library_gives_the_loader_message
    ok, out = load_with({ "HEV2_LIBRARY" => __FILE__ })
    refute ok
    assert_includes out, __FILE__
    assert_match(/invalid ELF header|file too short/, out)
  end

  # A library of another architecture (an aarch64 gem installed on x86_64)
  # is named as such: the dynamic linker calls it "No such file".
  def test_a_library_of_another_machine_says_so
    Dir.mktmpdir do |dir|
      so = File.join(dir, "libhev2.so")
      ours = File.binread("/proc/self/exe", 20).unpack1("@18v")
      theirs = ours == 183 ? 62 : 183
      header = "\x7FELF".b + [2, 1, 1].pack("C3") + ("\0" * 9) + [3, theirs].pack("v2")
      File.binwrite(so, header + ("\0" * 44))
      ok, out = load_with({ "HEV2_LIBRARY" => so })
      refute ok
      assert_includes out, "it is a library for #{theirs == 183 ? "aarch64" : "x86_64"}, this Ruby runs on"
    end
  end

  def test_every_candidate_is_listed_when_none_loads
    Dir.mktmpdir do |dir|
      FileUtils.cp_r(LIB, dir) # a copy with no native/ and no build/ next to it
      ok, out = load_with({ "HEV2_LIBRARY" => nil, "LD_LIBRARY_PATH" => dir }, File.join(dir, "lib"))
      refute ok
      assert_includes out, File.join(dir, "lib/hev2/native/libhev2.so")
      assert_includes out, "build/libhev2.so (no such file)"
      assert_match(/libhev2\.so \(.*cannot open shared object file/, out)
      assert_includes out, "HEV2_LIBRARY"
    end
  end

  # With two fds free at the first connect, the library's permanent fds
  # (Go's runtime poller, the epoll fd) cannot be made: the connect must
  # raise the real cause, Errno::EMFILE, with the library's detail, not
  # whatever errno happened to be left over (and Go's runtime must not
  # abort the process). The gem and the library are loaded first: Ruby's
  # own requires and the Go runtime's start-up need fds of their own.
  NO_FDS = <<~RUBY
    require "hev2"
    Hev2.stats
    Process.setrlimit(:NOFILE, 64, 64)
    held = []
    begin
      loop { held << File.open(File::NULL) }
    rescue Errno::EMFILE
    end
    held.pop(2).each(&:close)
    begin
      Hev2.tcp("127.0.0.1", 9)
      print "connected?"
    rescue Exception => e # rubocop:disable Lint/RescueException
      print "\#{e.class}|\#{e.message}"
    end
  RUBY

  def test_first_connect_with_no_fd_free_raises_the_real_errno
    out = IO.popen({ "HEV2_LIBRARY" => ENV.fetch("HEV2_LIBRARY") },
                   [RbConfig.ruby, "-I#{LIB}", "-e", NO_FDS], err: %i[child out], &:read)
    klass, message = out.split("|", 2)
    assert_equal "Errno::EMFILE", klass, out
    assert_includes message, "hev2_connect_len: cannot make the library's permanent fds"
    assert_includes message, "Too many open files"
  end

  # A library of another major version is refused, naming both versions.
  def test_a_library_of_another_version_is_refused
    Dir.mktmpdir do |dir|
      src = File.join(dir, "fake.c")
      File.write(src, "int hev2_version(void) { return 20000; }\n")
      so = File.join(dir, "libhev2.so")
      assert system(ENV.fetch("CC", "cc"), "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", src, "-o", so)
      ok, out = load_with({ "HEV2_LIBRARY" => so })
      refute ok
      assert_includes out, "is libhev2 20000; this gem needs 1.x"
    end
  end

  def test_found_in_the_repository_build_without_the_variable
    ok, out = load_with({ "HEV2_LIBRARY" => nil })
    assert ok, out
    assert_equal File.realpath(File.expand_path("../../../build/libhev2.so", __dir__)), File.realpath(out)
  end
end

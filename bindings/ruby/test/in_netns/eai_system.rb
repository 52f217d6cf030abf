# frozen_string_literal: true

# A real EAI_SYSTEM (Ruby Bug #20198), in a fresh process inside the test
# namespace (test/test_intents.rb starts it): every free fd is taken under a
# small RLIMIT_NOFILE before the process's first name lookup, so getaddrinfo
# cannot open its configuration and answers EAI_SYSTEM with errno EMFILE on
# the resolver's thread. (glibc keeps that failure for the rest of the
# process, hence a process of its own.) The race is started and waited for
# with hev2_connect + hev2_wait, which need no fd, and its outcome goes
# through Hev2.tcp's own outcome code: Errno::EMFILE must come out, not a
# resolution error.
require_relative "../helper"

abort "eai_system.rb must run inside its test namespace" unless File.read("/etc/resolv.conf").include?("127.0.0.1")

class TestEAISystem < Minitest::Test
  include Helper

  def test_eai_system_raises_the_errno_of_the_resolver_thread
    # The library's own fds must exist before the fds run out, including
    # the Go runtime's netpoller, created on Go's first timer: without it,
    # a timer armed under EMFILE aborts the process ("runtime: netpollinit
    # failed"). warm_up arms one.
    warm_up
    f = Hev2::Native::F
    s = Hev2::Scratch.new
    host = "eai-system.hev2.test"
    soft, hard = Process.getrlimit(:NOFILE)
    fillers = []
    Process.setrlimit(:NOFILE, [soft, 256].min, hard)
    begin
      loop { fillers << File.open(File::NULL) }
    rescue Errno::EMFILE
      nil
    end
    rc = f[:hev2_connect_len].call(Fiddle::Pointer[host].to_i, host.bytesize, s.port_string(80), 0,
                                   s.address + Hev2::Scratch::OUT)
    assert_equal Hev2::Native::OK, rc
    conn = s.u64(Hev2::Scratch::OUT)
    begin
      assert_equal Hev2::Native::OK, f[:hev2_wait].call(conn, 5000)
      assert_equal Hev2::Native::OK, f[:hev2_result].call(conn, s.address + Hev2::Scratch::RESULT)
      fillers.each(&:close)
      fillers.clear
      e = assert_raises(Errno::EMFILE) { Hev2::Connector.outcome(conn, s, host, 80, nil, Socket) }
      assert_equal Socket::EAI_SYSTEM, e.hev2_eai
      assert_includes e.message, host
    ensure
      f[:hev2_release].call(conn)
    end
  ensure
    fillers&.each(&:close)
    Process.setrlimit(:NOFILE, soft, hard) if soft
  end
end

# frozen_string_literal: true

require_relative "helper"

# The establishment report (Hev2.tcp(..., report: true)) on real loopback
# races: ::1 refusing or silent against a listening 127.0.0.1 is a real race
# of two families; a refused literal; a timed-out connect.
class TestReport < Minitest::Test
  include Helper

  # A listener on 127.0.0.1 and, on the same port of ::1, what the block's
  # caller wants there (a socket bound without listening: refused).
  def ipv4_listener_with_ipv6(kind)
    v6 = kind == :refuse ? ->(p) { Loopback.refusing("::1", p) } : ->(p) { Loopback.syn_dropping("::1", p) }
    port, srv, six = Loopback.one_port(->(p) { Loopback.listener("127.0.0.1", 128, p) }, v6)
    yield port
  ensure
    srv&.close
    [six].flatten.compact.each(&:close)
  end

  def test_ipv6_refused_ipv4_wins
    ipv4_listener_with_ipv6(:refuse) do |port|
      sock = Hev2.tcp("dual.test", port, addresses: ["::1", "127.0.0.1"], report: true)
      rep = Hev2.report_of(sock)
      sock.close
      assert rep.frozen?
      assert_equal [true, 1, :ipv4, "other-family-failed"], rep.values_at(:connected, :winner, :family, :reason)
      assert_nil rep[:timeout]
      assert_nil rep[:resolving]
      assert_nil rep[:resolution_delay]
      refute rep[:resolution_delay_expired]
      assert_equal 0.0, rep[:connecting][:start]
      assert_equal rep[:elapsed], rep[:connecting][:end]
      assert_equal [[:ipv6, "not-asked"], [:ipv4, "not-asked"]], rep[:lookups].map { |l| l.values_at(:family, :state) }
      v6, v4 = rep[:attempts]
      assert_equal ["::1", :ipv6, port, "failed", Errno::ECONNREFUSED::Errno],
                   v6.values_at(:address, :family, :port, :outcome, :errno)
      assert_equal ["127.0.0.1", :ipv4, "connected", 0], v4.values_at(:address, :family, :outcome, :errno)
      assert_equal [nil, nil], [v6[:synthesized_from], v4[:synthesized_from]] # no NAT64 on loopback
      # IPv4 starts the moment IPv6 is refused; its connect ends the race.
      assert_equal v6[:end], v4[:start]
      assert_equal rep[:elapsed], v4[:end]
    end
  end

  def test_ipv6_silent_first_to_connect
    ipv4_listener_with_ipv6(:drop) do |port|
      Hev2.tcp("dual.test", port, addresses: ["::1", "127.0.0.1"], connection_attempt_delay: 0.02,
                                  report: true) do |sock|
        rep = Hev2.report_of(sock)
        assert_equal [:ipv4, "first-to-connect"], rep.values_at(:family, :reason)
        assert_equal %w[lost connected], rep[:attempts].map { |a| a[:outcome] }
        assert_operator rep[:attempts][1][:start], :>=, 0.02
        assert_equal rep[:elapsed], rep[:attempts][0][:end]
      end
    end
  end

  def test_failure_carries_the_report
    closing(Loopback.refusing("127.0.0.1")) do |r|
      e = assert_raises(Errno::ECONNREFUSED) { Hev2.tcp("127.0.0.1", Loopback.port_of(r), report: true) }
      rep = e.hev2_report
      assert_equal [false, -1, nil, "none"], rep.values_at(:connected, :winner, :family, :reason)
      assert_equal [["failed", Errno::ECONNREFUSED::Errno]], rep[:attempts].map { |a| a.values_at(:outcome, :errno) }
    end
  end

  def test_timed_out_attempt
    srv, filler = Loopback.syn_dropping("127.0.0.1")
    e = assert_raises(Errno::ETIMEDOUT) do
      Hev2.tcp("127.0.0.1", Loopback.port_of(srv), connect_timeout: 0.03, report: true)
    end
    rep = e.hev2_report
    assert_equal :connect_timeout, rep[:timeout]
    assert_equal [["timed-out", Errno::ETIMEDOUT::Errno]], rep[:attempts].map { |a| a.values_at(:outcome, :errno) }
  ensure
    srv&.close
    filler&.close
  end

  def test_no_report_unless_asked
    closing(Loopback.listener("127.0.0.1")) do |srv|
      Hev2.tcp("127.0.0.1", Loopback.port_of(srv)) { |sock| assert_nil Hev2.report_of(sock) }
      Socket.tcp("127.0.0.1", Loopback.port_of(srv)) { |sock| assert_nil Hev2.report_of(sock) }
    end
  end

  def test_report_must_be_a_boolean
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", 1, report: 1) }
  end
end

# frozen_string_literal: true

require_relative "helper"

# One connect at a time: what the completion hands over, and the races.
class TestConnect < ExtTest
  def test_connect_returns_at_once_and_value_is_a_working_socket
    srv = later_close(Loopback.listener("127.0.0.1"))
    pending = Hev2Ext.connect("127.0.0.1", Loopback.port_of(srv))
    assert_instance_of Hev2Ext::Pending, pending
    sock = later_close(pending.value)
    assert_instance_of Socket, sock
    assert pending.done?
    assert_equal 0, pending.status
    assert_equal Loopback.port_of(srv), sock.remote_address.ip_port
    peer = later_close(srv.accept.first)
    sock.write("ping")
    assert_equal "ping", peer.read(4)
    peer.write("pong")
    assert_equal "pong", sock.read(4)
  end

  def test_ipv6_loopback
    srv = later_close(Loopback.listener("::1"))
    sock = later_close(Hev2Ext.connect("::1", Loopback.port_of(srv).to_s).value)
    assert_equal "::1", sock.remote_address.ip_address
  end

  def test_value_hands_over_one_socket_however_often_it_is_called
    srv = later_close(Loopback.listener("127.0.0.1"))
    pending = Hev2Ext.connect("127.0.0.1", Loopback.port_of(srv))
    first = later_close(pending.value)
    assert_same first, pending.value
    assert_equal 1, pending.completions
  end

  def test_the_stamps_follow_the_completions_path
    srv = later_close(Loopback.listener("127.0.0.1"))
    pending = Hev2Ext.connect("127.0.0.1", Loopback.port_of(srv))
    later_close(pending.value)
    woke = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    assert_operator pending.started_ns, :<=, pending.finished_ns
    assert_operator pending.finished_ns, :<=, pending.job_ns
    assert_operator pending.job_ns, :<=, woke
    assert_operator pending.elapsed_ms, :>=, 0
    assert_kind_of Thread, pending.job_thread
  end

  # ::1 refuses, 127.0.0.1 listens on the same port: ::1 is tried first
  # (RFC 6724), fails at once, and the next attempt wins.
  def test_race_refused_ipv6_beside_listening_ipv4
    port, refuser, srv = Loopback.one_port(->(p) { Loopback.refusing("::1", p) },
                                           ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    later_close(refuser, srv)
    pending = Hev2Ext.connect(RACE_NAME, port, addresses: ["::1", "127.0.0.1"], history: false)
    sock = later_close(pending.value)
    assert_equal ["127.0.0.1", port], [sock.remote_address.ip_address, sock.remote_address.ip_port]
  end

  def test_race_refused_ipv4_beside_listening_ipv6
    port, refuser, srv = Loopback.one_port(->(p) { Loopback.refusing("127.0.0.1", p) },
                                           ->(p) { Loopback.listener("::1", 16, p) })
    later_close(refuser, srv)
    pending = Hev2Ext.connect(RACE_NAME, port, addresses: ["127.0.0.1", "::1"], history: false)
    sock = later_close(pending.value)
    assert_equal "::1", sock.remote_address.ip_address
  end

  # ::1 drops SYNs: the race is decided on a library thread when IPv4,
  # started one attempt delay later, connects. The completion comes from
  # there, after connect has returned.
  def test_race_decided_on_a_library_thread
    port, v6, srv = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                      ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    later_close(v6, srv)
    pending = Hev2Ext.connect(RACE_NAME, port, addresses: ["::1", "127.0.0.1"],
                                               attempt_delay: 0.01, history: false)
    sock = later_close(pending.value)
    assert_equal "127.0.0.1", sock.remote_address.ip_address
    assert_operator pending.elapsed_ms, :>=, 10, "IPv4 starts one attempt delay after IPv6"
  end

  def test_refused_raises_with_the_errno
    refuser = later_close(Loopback.refusing("127.0.0.1"))
    pending = Hev2Ext.connect("127.0.0.1", Loopback.port_of(refuser))
    e = assert_raises(Hev2Ext::Error) { pending.value }
    assert_equal Hev2Ext::ECONNECT, e.status
    assert_equal Errno::ECONNREFUSED::Errno, e.errno
    assert_match(/refused/, e.message)
    assert_equal Hev2Ext::ECONNECT, pending.status
  end

  def test_timeout_is_an_outcome
    drop = later_close(Loopback.syn_dropping("127.0.0.1"))
    pending = Hev2Ext.connect("127.0.0.1", Loopback.port_of(drop.first), open_timeout: 0.05)
    e = assert_raises(Hev2Ext::Error) { pending.value }
    assert_equal Hev2Ext::ETIMEOUT, e.status
  end

  def test_refused_calls_raise_at_once_and_start_nothing
    before = Hev2Ext.stats
    e = assert_raises(Hev2Ext::Error) { Hev2Ext.connect("127.0.0.1", 0) }
    assert_match(/hev2_connect: .*port/, e.message)
    assert_raises(Hev2Ext::Error) { Hev2Ext.connect("127.0.0.1", 80, open_timeout: -1) }
    assert_raises(ArgumentError) { Hev2Ext.connect("127.0.0.1", 80, family: :ipx) }
    assert_raises(ArgumentError) { Hev2Ext.connect("127.0.0.1", 80, unknown: 1) }
    assert_raises(ArgumentError) { Hev2Ext.connect("a\0b", 80) }
    assert_equal before[:connects], Hev2Ext.stats[:connects]
  end
end

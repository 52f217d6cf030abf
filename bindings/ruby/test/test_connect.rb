# frozen_string_literal: true

require_relative "helper"

# Hev2.tcp on loopback: real listeners, refusals and SYN-dropping listeners;
# names map to ::1/127.0.0.1 through the static `addresses:` option (no
# resolver is involved).
class TestConnect < Minitest::Test
  include Helper

  def test_ipv4_and_ipv6_literals
    %w[127.0.0.1 ::1].each do |ip|
      closing(Loopback.listener(ip)) do |srv|
        sock = Hev2.tcp(ip, Loopback.port_of(srv))
        assert_instance_of Socket, sock
        assert_equal ip, sock.remote_address.ip_address
        assert_equal Loopback.port_of(srv), sock.remote_address.ip_port
        refute sock.closed?
        sock.close
      end
    end
  end

  def test_block_form_yields_closes_and_returns_the_block_value
    closing(Loopback.listener("127.0.0.1")) do |srv|
      kept = nil
      value = Hev2.tcp("127.0.0.1", Loopback.port_of(srv).to_s) do |sock|
        kept = sock
        sock.write("x")
        :from_block
      end
      assert_equal :from_block, value
      assert kept.closed?
    end
  end

  def test_data_flows
    closing(Loopback.listener("::1")) do |srv|
      Hev2.tcp("::1", Loopback.port_of(srv), nodelay: true) do |sock|
        peer, = srv.accept
        sock.write("ping")
        assert_equal "ping", peer.read(4)
        peer.write("pong")
        assert_equal "pong", sock.read(4)
        assert_equal 1, sock.getsockopt(:TCP, :NODELAY).int
        peer.close
      end
    end
  end

  def test_refused_raises_errno_naming_host_and_port
    closing(Loopback.refusing("127.0.0.1")) do |r|
      port = Loopback.port_of(r)
      e = assert_raises(Errno::ECONNREFUSED) { Hev2.tcp("127.0.0.1", port) }
      assert_includes e.message, "127.0.0.1"
      assert_includes e.message, port.to_s
      assert_equal "ECONNREFUSED", Hev2.describe_error(e)["errno"]
    end
  end

  def test_ipv6_preferred_when_both_families_listen
    v6, v4, port = Loopback.dual_listeners
    closing(v6, v4) do
      Hev2.tcp("both.test", port, addresses: ["127.0.0.1", "::1"]) do |sock|
        assert_equal "::1", sock.remote_address.ip_address
      end
    end
  end

  def test_ipv6_blackholed_falls_back_to_ipv4_after_the_attempt_delay
    # ::1 drops SYNs, 127.0.0.1 listens, on one port
    port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    closing(srv6, filler, v4) do
      events = []
      t = elapsed do
        Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"], trace: events.method(:<<)) do |sock|
          assert_equal "127.0.0.1", sock.remote_address.ip_address
        end
      end
      v4 = events.find { |e| e.kind == "attempt-started" && e.family == :ipv4 }
      assert_in_delta 250, v4.at_ms, 60, "IPv4 starts one connection attempt delay after IPv6"
      assert_operator t, :<, 2.0
      kinds = events.map(&:kind)
      assert_equal "attempt-started", kinds.first
      assert_includes kinds, "attempt-won"
      assert_equal :ipv6, events.first.family
    end
  end

  def test_ipv6_refused_falls_back_at_once
    port, r6, v4 = Loopback.one_port(->(p) { Loopback.refusing("::1", p) },
                                     ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    closing(r6, v4) do
      events = []
      Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"], trace: events.method(:<<)) do |sock|
        assert_equal "127.0.0.1", sock.remote_address.ip_address
      end
      v4 = events.find { |e| e.kind == "attempt-started" && e.family == :ipv4 }
      assert_operator v4.at_ms, :<, 100, "a refusal starts the next attempt at once, not after 250 ms"
    end
  end

  def test_connect_timeout_as_socket_tcp_raises_it
    srv, filler = Loopback.syn_dropping("127.0.0.1")
    closing(srv, filler) do
      e = nil
      t = elapsed do
        e = assert_raises(Errno::ETIMEDOUT) { Hev2.tcp("127.0.0.1", Loopback.port_of(srv), connect_timeout: 0.2) }
      end
      assert_match(/user specified timeout/, e.message)
      assert_includes e.message, Loopback.port_of(srv).to_s
      assert_equal "connect_timeout", Hev2.describe_error(e)["timeout"]
      assert_operator t, :>=, 0.19
      assert_operator t, :<, 1.0
    end
  end

  def test_open_timeout
    srv, filler = Loopback.syn_dropping("::1")
    closing(srv, filler) do
      klass = defined?(IO::TimeoutError) ? IO::TimeoutError : Errno::ETIMEDOUT
      e = assert_raises(klass) { Hev2.tcp("::1", Loopback.port_of(srv), open_timeout: 0.15) }
      assert_match(/user specified timeout/, e.message)
      assert_equal "open_timeout", Hev2.describe_error(e)["timeout"]
    end
  end

  def test_fast_fallback_false_tries_one_address_at_a_time
    # ::1 drops SYNs, 127.0.0.1 listens, on one port
    port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    closing(srv6, filler, v4) do
      events = []
      Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"], fast_fallback: false,
                                  connect_timeout: 0.4, trace: events.method(:<<)) do |sock|
        assert_equal "127.0.0.1", sock.remote_address.ip_address
      end
      v4 = events.find { |e| e.kind == "attempt-started" && e.family == :ipv4 }
      assert_operator v4.at_ms, :>=, 395, "serial mode waits out the first attempt's connect_timeout"
    end
  end

  def test_local_host_binds_and_restricts_the_family
    v6, v4, port = Loopback.dual_listeners
    closing(v6, v4) do
      Hev2.tcp("both.test", port, "127.0.0.1", nil, addresses: ["::1", "127.0.0.1"]) do |sock|
        assert_equal "127.0.0.1", sock.remote_address.ip_address
        assert_equal "127.0.0.1", sock.local_address.ip_address
      end
    end
  end

  def test_local_port_alone_binds_the_wildcard_address
    # The port is taken on the wildcard address without SO_REUSEADDR, as
    # hev2 binds it: a reuse-address bind on 127.0.0.1 may be given a port
    # a TIME_WAIT socket still holds there, which hev2's bind then refuses.
    taken = Socket.new(:INET, :STREAM)
    taken.bind(Addrinfo.tcp("0.0.0.0", 0))
    closing(Loopback.listener("127.0.0.1"), taken) do |srv, _|
      free_port = Loopback.port_of(taken)
      taken.close # a port that was free a moment ago
      Hev2.tcp("127.0.0.1", Loopback.port_of(srv), nil, free_port) do |sock|
        assert_equal free_port, sock.local_address.ip_port
      end
    end
  end

  def test_nil_host_means_loopback
    v6, v4, port = Loopback.dual_listeners
    closing(v6, v4) do
      Hev2.tcp(nil, port) { |sock| assert sock.remote_address.ipv6_loopback? }
    end
  end

  def test_family_restriction
    v6, v4, port = Loopback.dual_listeners
    closing(v6, v4) do
      Hev2.tcp("both.test", port, addresses: ["::1", "127.0.0.1"], family: :ipv4) do |sock|
        assert_equal "127.0.0.1", sock.remote_address.ip_address
      end
    end
  end

  def test_bad_arguments_start_nothing
    before = Hev2.stats[:handles_created]
    assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", 0) }
    assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", 80, connect_timeout: 1, open_timeout: 1) }
    assert_raises(TypeError) { Hev2.tcp(:sym, 80) }
    assert_equal before, Hev2.stats[:handles_created]
  end

  def test_library_info_and_version
    assert_equal 1, Hev2.library[:version] / 10_000
    assert File.exist?(Hev2.library[:path])
  end
end

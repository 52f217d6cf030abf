# frozen_string_literal: true

require_relative "helper"

# The network's history through the gem: ::1 drops SYNs and 127.0.0.1
# accepts on the same port, under one name. The first Hev2.tcp pays the
# attempt delay; the next ones go to IPv4 first and say why.
class TestHistory < Minitest::Test
  include Helper

  def setup
    Hev2.clear_history
    Hev2.history = true
  end

  def teardown
    Hev2.history = false
    Hev2.clear_history
  end

  def with_blackholed_v6
    # ::1 drops SYNs, 127.0.0.1 listens, on one port
    port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
    yield port
  ensure
    [srv6, filler, v4].each { |s| s&.close }
  end

  def first_family(port, **opts)
    events = []
    Hev2.tcp("hole.test", port, addresses: ["::1", "127.0.0.1"], connection_attempt_delay: 0.05,
                                trace: events.method(:<<), **opts) do |sock|
      assert_equal "127.0.0.1", sock.remote_address.ip_address
    end
    [events.find { |e| e.kind == "attempt-started" }.family, events]
  end

  def test_second_connect_goes_ipv4_first_and_says_why
    assert Hev2.history?
    with_blackholed_v6 do |port|
      assert_equal :ipv6, first_family(port).first
      family, events = first_family(port)
      assert_equal :ipv4, family
      h = events.first
      assert_equal "history", h.kind
      assert_equal :ipv4, h.family
      assert_match(/\AIPv4 first: IPv6 to hole.test lost 1 race without connecting/, h.detail)
      assert_operator Hev2.stats[:history_entries], :>=, 1
    end
  end

  def test_off_per_call_off_for_the_process_and_cleared
    with_blackholed_v6 do |port|
      first_family(port)
      assert_equal :ipv6, first_family(port, history: false).first
      Hev2.history = false
      refute Hev2.history?
      assert_equal :ipv6, first_family(port).first
      Hev2.history = true
      assert_equal :ipv4, first_family(port).first
      Hev2.clear_history
      assert_equal :ipv6, first_family(port).first
    end
  end

  def test_bad_values
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", 1, history: 1) }
    assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", 1, history_lifetime: -1) }
  end
end

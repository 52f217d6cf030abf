# frozen_string_literal: true

# Ruby's own Happy Eyeballs test intents (test/socket of CRuby 3.4, written
# again here) run for real: inside a network namespace of their own
# (test/test_intents.rb starts this file with `ip netns exec`), where
# getaddrinfo asks the DNS server below (hev2-testdns, test/testdns.rb) on
# 127.0.0.1:53 and every address is loopback. Hev2.tcp uses the system
# resolver, as Socket.tcp does.
require_relative "../helper"
require_relative "../testdns"

abort "intents.rb must run inside its test namespace" unless File.read("/etc/resolv.conf").include?("127.0.0.1")

DNS = TestDNSServer.new("127.0.0.1", 53)
Minitest.after_run { DNS.close }

class TestIntents < Minitest::Test
  include Helper

  def setup
    @v6, @v4, @port = Loopback.dual_listeners
    # one name per test (a DNS label has at most 63 characters)
    @name = "#{name.delete_prefix("test_").tr("_", "-")[0, 40]}.hev2.test"
    DNS.query_log
  end

  def teardown
    [@v6, @v4].each { |s| s.close unless s.closed? }
  end

  def winner(**options)
    @events = []
    Hev2.tcp(@name, @port, trace: @events.method(:<<), **options) { |s| s.remote_address.ip_address }
  end

  # When the library started the first attempt of family (ms since the call).
  def attempt_started(family)
    @events.find { |e| e.kind == "attempt-started" && e.family == family }&.at_ms
  end

  def test_ipv6_resolved_earlier
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", addrs: ["127.0.0.1"], delay: 0.1)
    assert_equal "::1", winner
  end

  def test_ipv4_resolved_earlier
    DNS.set(@name, "AAAA", addrs: ["::1"], delay: 0.3)
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_equal "127.0.0.1", winner
    # Timed by the library's own clock, so a loaded machine cannot blur it.
    assert_operator attempt_started(:ipv4), :>=, 45, "IPv4 waits for the Resolution Delay"
    assert_operator attempt_started(:ipv4), :<, 250, "IPv4 does not wait for the late AAAA"
    assert_nil attempt_started(:ipv6)
  end

  # AAAA 20 ms after A, within the Resolution Delay (here 250 ms rather
  # than 50, so that a loaded machine cannot push the answer past it).
  def test_ipv6_within_the_resolution_delay
    DNS.set(@name, "AAAA", addrs: ["::1"], delay: 0.02)
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_equal "::1", winner(resolution_delay: 0.25)
    assert_nil attempt_started(:ipv4)
  end

  def test_ipv6_refused
    @v6.close
    refusing = Loopback.bound_socket_on("::1", @port) # bound, not listening: RST
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_equal "127.0.0.1", winner
    refused_at = @events.find { |e| e.kind == "attempt-failed" && e.family == :ipv6 }.at_ms
    assert_operator attempt_started(:ipv4) - refused_at, :<, 50,
                    "a refusal starts the IPv4 attempt at once, not after the 250 ms attempt delay"
  ensure
    refusing&.close
  end

  def test_one_family_resolution_fails
    DNS.set(@name, "AAAA", servfail: true)
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_equal "127.0.0.1", winner
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", nxdomain: true)
    assert_equal "::1", winner
  end

  def test_every_resolution_fails_and_the_last_error_wins
    DNS.set(@name, "AAAA", nxdomain: true)
    DNS.set(@name, "A", servfail: true, delay: 0.1)
    e = assert_raises(SocketError) { winner }
    assert_kind_of Hev2::ResolutionError, e
    assert_kind_of Socket::ResolutionError, e if defined?(Socket::ResolutionError)
    assert_equal Socket::EAI_AGAIN, e.error_code
    assert_includes e.message, @name

    DNS.set(@name, "AAAA", servfail: true)
    DNS.set(@name, "A", nxdomain: true, delay: 0.1)
    e = assert_raises(SocketError) { winner }
    assert_equal Socket::EAI_NONAME, e.error_code
    assert_equal "EAI_NONAME", Hev2.describe_error(e)["eai"]
  end

  def test_resolution_failure_after_a_connection_failure_keeps_the_connection_error
    @v4.close
    refusing = Loopback.bound_socket_on("127.0.0.1", @port)
    DNS.set(@name, "AAAA", nxdomain: true, delay: 0.1)
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_raises(Errno::ECONNREFUSED) { winner }
  ensure
    refusing&.close
  end

  def test_resolv_timeout
    DNS.set(@name, "AAAA", never: true)
    DNS.set(@name, "A", never: true)
    e = nil
    want = RUBY_VERSION >= "3.4" ? Errno::ETIMEDOUT : SocketError # as Socket.tcp raises it
    t = elapsed { e = assert_raises(want) { winner(resolv_timeout: 0.2) } }
    assert_match(/user specified timeout/, e.message)
    assert_equal "resolv_timeout", Hev2.describe_error(e)["timeout"]
    assert_operator t, :>=, 0.19
    assert_operator t, :<, 1.0
  end

  def test_connect_timeout
    srv6, filler6 = Loopback.syn_dropping("::1")
    port = Loopback.port_of(srv6)
    srv4 = Loopback.bound_socket_on("127.0.0.1", port)
    srv4.listen(0)
    filler4 = Socket.tcp("127.0.0.1", port)
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    e = nil
    t = elapsed { e = assert_raises(Errno::ETIMEDOUT) { Hev2.tcp(@name, port, connect_timeout: 0.3) } }
    assert_equal "connect_timeout", Hev2.describe_error(e)["timeout"]
    # connect_timeout counts from the last attempt (started 250 ms in).
    assert_operator t, :>=, 0.5
    assert_operator t, :<, 1.5
  ensure
    [srv6, filler6, srv4, filler4].each { |s| s&.close }
  end

  def test_ip_literals_are_not_resolved
    assert_equal "::1", Hev2.tcp("::1", @port) { |s| s.remote_address.ip_address }
    assert_equal "127.0.0.1", Hev2.tcp("127.0.0.1", @port) { |s| s.remote_address.ip_address }
    sleep 0.05
    assert_empty DNS.query_log
  end

  def test_fast_fallback_false
    @v6.close
    srv6, filler6 = Loopback.syn_dropping("::1") # another port: rebind the same one
    srv6.close
    filler6.close
    blackhole = Loopback.bound_socket_on("::1", @port)
    blackhole.listen(0)
    filler = Socket.tcp("::1", @port)
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    assert_equal "127.0.0.1", winner(fast_fallback: false, connect_timeout: 0.3)
    assert_operator attempt_started(:ipv4) - attempt_started(:ipv6), :>=, 295,
                    "serial mode waits out the IPv6 attempt's connect_timeout"
  ensure
    [blackhole, filler].each { |s| s&.close }
  end

  def test_local_host_with_a_name
    DNS.set(@name, "AAAA", addrs: ["::1"])
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    got = Hev2.tcp(@name, @port, "127.0.0.1") { |s| [s.remote_address.ip_address, s.local_address.ip_address] }
    assert_equal %w[127.0.0.1 127.0.0.1], got
  end

  # Feature #19965: a lookup that never answers can still be interrupted.
  # The getaddrinfo calls are abandoned (they finish on their own threads),
  # the handle is released at once.
  def test_timeout_during_resolution
    require "timeout"
    DNS.set(@name, "AAAA", never: true)
    DNS.set(@name, "A", never: true)
    # A lookup an earlier test's race no longer wanted is counted as
    # abandoned when its goroutine leaves, which can be after that test
    # returned: take the baseline once none is running.
    assert eventually(5.0) { Hev2.stats[:lookups_in_flight].zero? }, "lookups of earlier tests still running"
    before = Hev2.stats
    t = elapsed { assert_raises(Timeout::Error) { Timeout.timeout(0.1) { Hev2.tcp(@name, @port) } } }
    assert_operator t, :<, 1.0, "glibc alone would wait for its 1 s DNS timeout"
    after = Hev2.stats
    assert_equal before[:handles_live], after[:handles_live]
    assert eventually { Hev2.stats[:handles_running] == before[:handles_running] }
    assert eventually { Hev2.stats[:lookups_abandoned] == before[:lookups_abandoned] + 2 },
           "lookups abandoned: #{Hev2.stats.slice(:lookups_abandoned, :lookups_in_flight)} (before: #{before[:lookups_abandoned]})"
  end

  def test_ruby_socket_tcp_resolves_the_same_names
    # The namespace is sound: Ruby's own resolver path sees the same server.
    DNS.set(@name, "A", addrs: ["127.0.0.1"])
    DNS.set(@name, "AAAA", nodata: true)
    Socket.tcp(@name, @port) { |s| assert_equal "127.0.0.1", s.remote_address.ip_address }
  end
end

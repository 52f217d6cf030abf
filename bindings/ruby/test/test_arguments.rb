# frozen_string_literal: true

require "minitest/autorun"
require "hev2/arguments"

# Argument checking happens before the library is entered; bad input gets a
# clear ArgumentError/TypeError.
class TestArguments < Minitest::Test
  def build(host = "example.test", port = 80, local_host = nil, local_port = nil,
            resolv_timeout: nil, connect_timeout: nil, open_timeout: nil, fast_fallback: true, **more)
    Hev2::Arguments.build(host, port, local_host, local_port, resolv_timeout, connect_timeout,
                          open_timeout, fast_fallback, more)
  end

  def test_defaults
    r = build
    assert_equal "example.test", r.host
    assert_equal 80, r.port
    assert_nil r.local_host
    assert_equal 0, r.local_port
    assert_equal true, r.fast_fallback
    assert_equal :unspec, r.family
    assert_equal :system, r.resolver
  end

  def test_ports_as_socket_tcp_takes_them
    assert_equal 8080, build("h", "8080").port
    assert_equal 80, build("h", "http").port
    # out of range (getaddrinfo would wrap them) and port 0: documented differences
    [70_000, -1, 0, nil, "", "65536"].each { |p| assert_raises(ArgumentError, p.inspect) { build("h", p) } }
    # an unknown service is getaddrinfo's EAI_SERVICE, as in Ruby
    e = assert_raises(SocketError) { build("h", "no-such-service-hev2") }
    assert_equal Socket::EAI_SERVICE, e.error_code
    assert_raises(TypeError) { build("h", 1.5) }
  end

  def test_host_checks
    assert_equal "0.0.0.42", build(42).host # an Integer is an IPv4 address, as in ext/socket
    assert_raises(TypeError) { build(1.5) }
    assert_nil build("").host # "" is getaddrinfo(NULL): loopback, as in Ruby
    assert_equal "0.0.0.0", build("<any>").host
    assert_raises(ArgumentError) { build("a\0b") }
    assert_raises(ArgumentError) { build("a" * 1025) }
    e = assert_raises(SocketError) { build("[::1]") } # getaddrinfo's answer
    assert_equal Socket::EAI_NONAME, e.error_code
    assert_equal Socket::EAI_NONAME, assert_raises(SocketError) { build("a" * 300) }.error_code
    assert_equal "::1", build("::1%1").host # the kernel ignores a zone off link-local
    assert_equal "fe80::1%1", build("fe80::1%1").host
    assert_raises(SocketError) { build("::1%nosuchif") }
    assert_nil build(nil).host
  end

  def test_local_host_literals_are_normalised
    assert_equal "::1", build("h", 1, "0:0::1").local_host
    assert_equal "127.0.0.1", build("h", 1, "127.0.0.1", 4000).local_host
    assert_equal 4000, build("h", 1, "127.0.0.1", 4000).local_port
  end

  def test_timeouts
    assert_equal 1.5, build(resolv_timeout: 1.5).resolv_timeout
    assert_equal 0, build(connect_timeout: 0).connect_timeout
    assert_raises(ArgumentError) { build(connect_timeout: -1) }
    assert_raises(TypeError) { build(connect_timeout: "1") }
    assert_raises(ArgumentError) { build(open_timeout: Float::INFINITY) }
    e = assert_raises(ArgumentError) { build(open_timeout: 1, connect_timeout: 1) }
    assert_match(/open_timeout/, e.message)
  end

  def test_fast_fallback_is_read_as_socket_tcp_reads_it
    assert_equal false, build(fast_fallback: false).fast_fallback
    assert_equal false, build(fast_fallback: nil).fast_fallback
    assert_equal true, build(fast_fallback: 1).fast_fallback
  end

  def test_nodelay_must_be_boolean
    assert_raises(TypeError) { build(nodelay: "yes") }
  end

  def test_more_keywords
    r = build(family: :ipv6, resolution_delay: 0.01, connection_attempt_delay: 0.05,
              first_address_family_count: 2, nodelay: true, addresses: ["::1", "127.0.0.1"])
    assert_equal :ipv6, r.family
    assert_equal 0.01, r.resolution_delay
    assert_equal 2, r.first_address_family_count
    assert_equal ["::1", "127.0.0.1"], r.addresses
    assert_equal true, r.nodelay
    assert_equal :ipv4, build(family: Socket::AF_INET).family
    assert_raises(ArgumentError) { build(family: :ipx) }
    assert_raises(ArgumentError) { build(addresses: ["not-an-ip"]) }
    assert_raises(ArgumentError) { build(addresses: []) }
  end

  def test_resolver_choice
    assert_equal :builtin, build(nameservers: ["127.0.0.1:53"]).resolver
    assert_raises(ArgumentError) { build(resolver: :system, nameservers: ["127.0.0.1"]) }
    assert_raises(ArgumentError) { build(resolver: :dns) }
  end

  def test_unknown_keywords_are_named
    e = assert_raises(ArgumentError) { build(conect_timeout: 1) }
    assert_match(/conect_timeout/, e.message)
  end
end

# frozen_string_literal: true

require_relative "helper"

# Arguments.build makes Ruby's own checks (types, what Ruby converts) before
# the library is entered; the values are judged by the library's rules
# (core's, stated once), which Hev2.tcp maps to Ruby's exceptions. Both
# layers are tested here: the second with a refusing loopback port as the
# target, so that nothing could connect if a rule let a value through.
class TestArguments < Minitest::Test
  include Helper

  def build(host = "example.test", port = 80, local_host = nil, local_port = nil,
            resolv_timeout: nil, connect_timeout: nil, open_timeout: nil, fast_fallback: true,
            klass: Socket, **more)
    Hev2::Arguments.build(host, port, local_host, local_port, resolv_timeout, connect_timeout,
                          open_timeout, fast_fallback, more, klass)
  end

  def test_defaults
    r = build
    assert_equal "example.test", r.host
    assert_equal 80, r.port
    assert_nil r.local_host
    assert_equal 0, r.local_port
    assert_equal true, r.fast_fallback
    assert_equal :unspec, r.family
    assert_nil r.resolver # the library's default: the system resolver
  end

  def test_ports_as_socket_tcp_takes_them
    assert_equal 8080, build("h", "8080").port
    assert_equal 80, build("h", "http").port
    assert_equal 0, build("h", nil).port # as Ruby sends nil and ""
    assert_equal 0, build("h", "").port
    # an unknown service is getaddrinfo's EAI_SERVICE, as in Ruby
    e = assert_raises(SocketError) { build("h", "no-such-service-hev2") }
    assert_equal Socket::EAI_SERVICE, e.error_code
    assert_raises(TypeError) { build("h", 1.5) }
    assert_raises(TypeError) { build("h", :http) }
  end

  # What getaddrinfo makes of a port Ruby hands it as a service: a negative
  # C int is looked up as a service name (EAI_SERVICE), whitespace and a
  # sign are strtoul's, "0x50" is no number; Ruby's own conversions raise
  # first (TypeError beyond a Fixnum; RangeError beyond a C int in
  # Socket.tcp's Addrinfo.getaddrinfo, which TCPSocket.new cuts instead).
  def test_ports_as_getaddrinfo_reads_them
    [-1, -2, "-1", "0x50", "80 ", (2**64).to_s].each do |p|
      e = assert_raises(SocketError, p.inspect) { build("h", p) }
      assert_equal Socket::EAI_SERVICE, e.error_code, p.inspect
      assert_kind_of Socket::ResolutionError, e if defined?(Socket::ResolutionError)
      assert_includes e.message, '"h" port'
    end
    assert_equal 80, build("h", " 80").port
    assert_equal 80, build("h", "+80").port
    assert_equal 80, build("h", "0080").port
    assert_raises(TypeError) { build("h", 2**64) }
    assert_raises(RangeError) { build("h", 2**32 + 80) }
    e = assert_raises(ArgumentError) { build("h", 2**32 + 80, nil, nil, klass: TCPSocket) }
    assert_match(/invalid port 4294967376: getaddrinfo would take it as port 80/, e.message)
    # the local port, as Ruby binds it (0: any port)
    assert_equal 0, build("h", 80, "127.0.0.1", "").local_port
    e = assert_raises(SocketError) { build("h", 80, "127.0.0.1", -1) }
    assert_equal Socket::EAI_SERVICE, e.error_code
  end

  # Where Ruby connects to another port than the one given (getaddrinfo
  # cuts the number to 16 bits), hev2 raises an ArgumentError instead.
  def test_ports_that_getaddrinfo_would_wrap_are_refused
    [65_536 + 80, "65616", "4294967376", "-4294967216"].each do |p|
      e = assert_raises(ArgumentError, p.inspect) { build("h", p) }
      assert_match(/invalid port #{Regexp.escape(p.inspect)}: getaddrinfo would take it as port 80/, e.message)
    end
    e = assert_raises(ArgumentError) { build("h", 80, "127.0.0.1", 65_536 + 4000) }
    assert_match(/invalid local_port 69536: getaddrinfo would take it as port 4000/, e.message)
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
    assert_raises(TypeError) { build(connect_timeout: "1") }
    assert_raises(RangeError) { build(connect_timeout: Float::NAN) } # as Socket.tcp
  end

  # A negative resolv_timeout as the running Ruby reads it (Arguments.resolv_timeout).
  def test_a_negative_resolv_timeout_is_read_as_ruby_reads_it
    assert_nil build("127.0.0.1", resolv_timeout: -1).resolv_timeout # nothing to resolve: connects
    assert_nil build("::1", resolv_timeout: -Float::INFINITY).resolv_timeout
    assert_nil build("h", resolv_timeout: -1, fast_fallback: false).resolv_timeout
    if RUBY_VERSION >= "3.4" # Socket.tcp: a deadline already past; TCPSocket.new: rb_time_interval's error
      assert_equal 0, build("h", resolv_timeout: -1).resolv_timeout
      e = assert_raises(ArgumentError) { build("h", resolv_timeout: -1, klass: TCPSocket) }
      assert_equal "time interval must not be negative", e.message
    else # ignored, as 3.1's Socket.tcp and TCPSocket.new ignore it
      assert_nil build("h", resolv_timeout: -1).resolv_timeout
      assert_nil build("h", resolv_timeout: -1, klass: TCPSocket).resolv_timeout
    end
  end

  def test_milliseconds_keep_their_sign_and_saturate
    c = Hev2::Connector
    assert_equal 0, c.timeout_ms(nil)
    assert_equal 1, c.timeout_ms(0) # Ruby's 0 is "no time", the ABI's 0 "none"
    assert_equal 1, c.timeout_ms(0.0001)
    assert_equal(-1, c.timeout_ms(-0.0001)) # negative stays negative: the library refuses it
    assert_equal 2**31 - 1, c.timeout_ms(10**12) # never wrapped into range
    assert_equal(-2**31, c.timeout_ms(-Float::INFINITY))
  end

  # The library's rules, through Hev2.tcp: ArgumentError with its reason,
  # a host no resolver could answer as getaddrinfo's EAI_NONAME.
  def test_values_are_judged_by_the_library
    closing(Loopback.refusing("127.0.0.1")) do |srv|
      port = Loopback.port_of(srv)
      {
        { connect_timeout: -1 } => /invalid connect_timeout: -1s out of range/,
        { resolv_timeout: 86_401 } => /invalid resolv_timeout: .* out of range/,
        { open_timeout: Float::INFINITY } => /invalid open_timeout: .* out of range/,
        { open_timeout: 1, connect_timeout: 1 } => /invalid open_timeout: cannot be combined/,
        { first_address_family_count: 65 } => /invalid first_address_family_count: 65 out of range/,
        { first_address_family_count: 2**70 } => /first_address_family_count: 2147483647 out of range/,
        { resolution_delay: -0.5 } => /invalid resolution_delay/,
        { keepalive: -1 } => /invalid keepalive/,
        { addresses: ["not-an-ip"] } => /not an IP address/,
        { addresses: [] } => /static_hosts entry/,
        { resolver: :system, nameservers: ["127.0.0.1"] } => /nameservers need the built-in resolver/,
        { resolver: :builtin, nameservers: [] } => /nameserver "" is not/,
      }.each do |kw, want|
        e = assert_raises(ArgumentError, kw.inspect) { Hev2.tcp("127.0.0.1", port, **kw) }
        assert_match want, e.message, kw.inspect
      end
      # port 0 (nil and "" are no port: 0) is the library's refusal
      [0, nil, ""].each do |p|
        e = assert_raises(ArgumentError, p.inspect) { Hev2.tcp("127.0.0.1", p) }
        assert_match(/invalid port/, e.message, p.inspect)
      end
      # the plain path (an Integer port, no option) answers as the general one
      e = assert_raises(SocketError) { Hev2.tcp("127.0.0.1", -1) }
      assert_equal Socket::EAI_SERVICE, e.error_code
      assert_match(/invalid port 70000: getaddrinfo would take it as port 4464/,
                   assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", 70_000) }.message)
      e = assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", port, "::1", nil, family: :ipv4) }
      assert_match(/invalid local_host: ::1 is not an address of family ipv4/, e.message)
      assert_match(/invalid local_port 70000: getaddrinfo would take it as port 4464/,
                   assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", port, "127.0.0.1", 70_000) }.message)
      e = assert_raises(SocketError) { Hev2.tcp("a" * 300, port) }
      assert_equal Socket::EAI_NONAME, e.error_code
      assert_match(/invalid host: longer than 253 characters/, e.message)
    end
  end

  def test_fast_fallback_is_read_as_socket_tcp_reads_it
    assert_equal false, build(fast_fallback: false).fast_fallback
    assert_equal false, build(fast_fallback: nil).fast_fallback
    assert_equal true, build(fast_fallback: 1).fast_fallback
  end

  def test_nodelay_must_be_boolean
    assert_raises(TypeError) { build(nodelay: "yes") }
  end

  def test_nat64_is_on_unless_turned_off
    assert_equal true, build.nat64
    assert_equal false, build(nat64: false).nat64
    assert_raises(TypeError) { build(nat64: "no") }
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
    assert_equal ["not-an-ip"], build(addresses: ["not-an-ip"]).addresses # the library judges it
    assert_equal 0, build(first_address_family_count: 0).first_address_family_count # the default
    assert_raises(TypeError) { build(first_address_family_count: 1.0) }
    # separators of the library's lists would change them
    assert_raises(ArgumentError) { build(addresses: ["::1,127.0.0.1"]) }
    assert_raises(ArgumentError) { build(nameservers: ["::1,127.0.0.1"]) }
  end

  def test_resolver_choice
    assert_nil build(nameservers: ["127.0.0.1:53"]).resolver # the library's default picks the built-in one
    assert_equal :system, build(resolver: :system).resolver
    assert_raises(ArgumentError) { build(resolver: :dns) }
  end

  def test_unknown_keywords_are_named
    e = assert_raises(ArgumentError) { build(conect_timeout: 1) }
    assert_match(/conect_timeout/, e.message)
  end
end

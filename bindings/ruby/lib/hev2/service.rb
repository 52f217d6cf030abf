# frozen_string_literal: true

require "fiddle"
require_relative "native"
require_relative "scratch"

module Hev2
  # What a connection's HTTPS query gave (Happy Eyeballs v3, RFC 9460), as
  # the library's hev2_service gives it (the same words as the C header's
  # HEV2_HTTPS_* and hev2-connect --json's "svcb").
  #
  #   sock = Hev2.tcp("example.test", 443, https_rr: true)
  #   Hev2.service_of(sock)
  #   # => {state: "answered", services: 1,
  #   #     service: {priority: 1, target: "example.test.", port: 8443,
  #   #               alpn: ["h2", "http/1.1"], ech: nil}}
  #
  # A frozen Hash, or nil when no HTTPS query was made (https_rr off, an
  # IP literal, addresses: given). A failed connection's exception answers
  # #hev2_service.
  #
  #   state      "answered" (services came, maybe none usable), "nodata",
  #              "nxdomain", "failed" (SERVFAIL, refused, a network error),
  #              "timeout", "malformed" (records came, none decoded),
  #              "alias-limit" (the AliasMode chain was too long), or
  #              "pending" (the race ended before the answer; hev2-connect's
  #              JSON says "timeout")
  #   services   how many usable services it answered
  #   service    the record the winner came from, nil when it came from
  #              the origin's own A/AAAA (or the connection failed):
  #              priority; target (fully qualified, final dot); port (the
  #              port it redirected to, 0: the origin's); alpn (its ALPN
  #              set, Strings: information, the caller's TLS still offers
  #              its own list); ech (its ECHConfigList, a binary String for
  #              the TLS library's ECH configuration, or nil)
  #
  # The TLS server name stays the host given to Hev2.tcp: a service's
  # target is where the connection went, never a name to check a
  # certificate against.
  module Service
    L = Layout::SERVICE
    SERVICE = Native::F[:hev2_service]

    module_function

    # The HTTPS outcome of a done handle, or nil when no HTTPS query was
    # made; s is its scratch.
    def read(conn, s)
      base = Scratch::SERVICE
      s.put_u64(base + L[:ech], s.address + Scratch::ECH)
      s.put_u64(base + L[:ech_size], Scratch::ECH_SIZE)
      check(SERVICE.call(conn, s.address + base))
      state = s.i32(base + L[:state])
      return nil if state == ABI::HTTPS_NONE

      {
        state: ABI::HTTPS_STATE_NAMES.fetch(state, "unknown"),
        services: s.i32(base + L[:n_services]),
        service: s.i32(base + L[:has_service]) == 1 ? service(conn, s, base) : nil,
      }.freeze
    end

    def service(conn, s, base)
      alpn = s.c_string(base + L[:alpn], ABI::ALPNLEN)
      {
        priority: s.i32(base + L[:priority]),
        target: s.c_string(base + L[:target], ABI::MAX_HOSTLEN + 2).freeze,
        port: s.i32(base + L[:port]),
        alpn: alpn.split(",").map(&:freeze).freeze,
        ech: ech(conn, s, base),
      }.freeze
    end

    # The ECHConfigList (binary), from the scratch's buffer or, when
    # longer, from a second call with a buffer of its length.
    def ech(conn, s, base)
      len = s.u64(base + L[:ech_len])
      return nil if len.zero?
      return s.bytes.byteslice(Scratch::ECH, len).freeze if len <= Scratch::ECH_SIZE

      buf = Fiddle::Pointer.malloc(len, Fiddle::RUBY_FREE)
      s.put_u64(base + L[:ech], buf.to_i)
      s.put_u64(base + L[:ech_size], len)
      check(SERVICE.call(conn, s.address + base))
      buf[0, len].b.freeze
    end

    def check(rc)
      return if rc == Native::OK

      detail, = Native.last_error
      raise Error.new("hev2: #{detail.empty? ? Native.strerror(rc) : detail}", rc)
    end
  end
end

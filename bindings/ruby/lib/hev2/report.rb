# frozen_string_literal: true

require "socket"
require_relative "native"
require_relative "scratch"

module Hev2
  # The establishment report of a connection: how its race went, as the
  # library's core built it from the recorded race (hev2_report: the same
  # report as C's, Go's core.Report and hev2-connect --json's "report").
  #
  #   sock = Hev2.tcp("example.test", 443, report: true)
  #   Hev2.report_of(sock)  # => {connected: true, family: :ipv4, reason: "other-family-failed", ...}
  #
  # A failed connection's exception answers #hev2_report. The report is a
  # frozen Hash with Symbol keys; times are seconds (Float) since the race's
  # start; names are the library's Strings; families :ipv4/:ipv6 (nil: none).
  #
  #   connected, winner      an attempt won; its index in :attempts (-1: none)
  #   family                 the winner's family
  #   reason                 why that family won, looking at the other one:
  #                          "first-to-connect", "other-family-failed",
  #                          "only-family-resolved", "other-family-not-tried",
  #                          "only-family-asked", "given-addresses"; "none"
  #   timeout                the last of the caller's timeouts that fired
  #                          (:resolv_timeout ...), nil if none
  #   elapsed                the race's start to its outcome
  #   resolving, resolution_delay, connecting
  #                          {start:, end:, duration:}, or nil when the race
  #                          never entered the phase (see the gem README for
  #                          each definition: they overlap)
  #   resolution_delay_expired  the delay ran its whole length
  #   lookups                [AAAA, A]: {family:, state: ("not-asked",
  #                          "abandoned", "answered", "failed", "timed-out"),
  #                          start:, end:, duration:, addresses:, eai:, errno:}
  #   attempts               in start order: {address:, family:, port:,
  #                          outcome: ("connected", "failed", "timed-out",
  #                          "lost", "canceled"), errno:, bind_failed:,
  #                          start:, end:, duration:, synthesized_from: (NAT64:
  #                          the IPv4 address it stands for, else nil),
  #                          service: (the HTTPS service it belongs to, 1
  #                          first; 0: the origin's own addresses), origin:
  #                          ("dns", "static", "synthesized", "hint",
  #                          "service")}
  #   https                  nil when the race made no HTTPS query, else
  #                          {state: (hev2_service's words: "answered",
  #                          "nodata", "nxdomain", "failed", "timeout",
  #                          "malformed", "alias-limit"; "pending": the race
  #                          ended before the answer),
  #                          lookups: [{query: ("HTTPS", "A", "AAAA"), name:,
  #                          state: ("pending", "answered", "failed",
  #                          "canceled"), start:, end:, duration:, records:,
  #                          addresses:, eai:, errno:}],
  #                          services: [{number:, priority:, target:, port:,
  #                          alpn: [...], ech: (true/false), hints:}],
  #                          skipped: [{priority:, target:, port:, reason:,
  #                          at:}], replaced: [{service:, address:, family:,
  #                          port:, at:}]}
  module Report
    L = Layout::REPORT
    PHASE = Layout::REPORT_PHASE
    LK = Layout::REPORT_LOOKUP
    AT = Layout::REPORT_ATTEMPT
    REPORT = Native::F[:hev2_report]
    LOOKUP = Native::F[:hev2_report_lookup]
    ATTEMPT = Native::F[:hev2_report_attempt]
    FAMILIES = { Socket::AF_INET => :ipv4, Socket::AF_INET6 => :ipv6 }.freeze

    module_function

    # The report of a done handle made with record_events; s is its scratch.
    def read(conn, s)
      base = Scratch::REPORT
      check(REPORT.call(conn, s.address + base))
      lookups = Array.new(2) { |i| lookup(conn, s, i) }
      attempts = Array.new(s.i32(base + L[:n_attempts])) { |i| attempt(conn, s, i) }
      {
        connected: s.i32(base + L[:connected]) == 1,
        winner: s.i32(base + L[:winner]),
        family: FAMILIES[s.i32(base + L[:family])],
        reason: ABI::REPORT_REASON_NAMES.fetch(s.i32(base + L[:reason]), "unknown"),
        timeout: Native::TIMEOUT_KINDS[s.i32(base + L[:timeout])],
        elapsed: seconds(s.f64(base + L[:elapsed_ms])),
        resolving: phase(s, base + L[:resolving]),
        resolution_delay: phase(s, base + L[:resolution_delay]),
        resolution_delay_expired: s.i32(base + L[:resolution_delay_expired]) == 1,
        connecting: phase(s, base + L[:connecting]),
        lookups: lookups.freeze,
        attempts: attempts.freeze,
        https: https(conn, s.i32(base + L[:https_state]), base, s),
      }.freeze
    end

    # The HTTPS part (nil without it), read through a buffer of its own:
    # rare enough not to take room in every connection's scratch.
    def https(conn, state, base, s)
      return nil if state == ABI::HTTPS_NONE

      counts = %i[n_service_lookups n_services n_skipped n_replaced].map { |k| s.i32(base + L[k]) }
      {
        state: ABI::HTTPS_STATE_NAMES.fetch(state, "unknown"),
        lookups: Array.new(counts[0]) { |i| service_lookup(conn, i) }.freeze,
        services: Array.new(counts[1]) { |i| service(conn, i) }.freeze,
        skipped: Array.new(counts[2]) { |i| skipped(conn, i) }.freeze,
        replaced: Array.new(counts[3]) { |i| replaced(conn, i) }.freeze,
      }.freeze
    end

    SL = Layout::REPORT_SERVICE_LOOKUP
    SV = Layout::REPORT_SERVICE
    SK = Layout::REPORT_SKIPPED
    RH = Layout::REPORT_REPLACED
    HOSTLEN = ABI::MAX_HOSTLEN + 2

    # fill calls fn(conn, i, buffer) with a zeroed struct of size (its
    # size field set) and returns the bytes it filled.
    def fill(fn, conn, i, size)
      buf = Fiddle::Pointer.malloc(size, Fiddle::RUBY_FREE)
      buf[0, size] = "\0".b * size
      buf[0, 8] = [size].pack("Q")
      check(fn.call(conn, i, buf.to_i))
      buf[0, size]
    end

    def text(bytes, offset, max)
      bytes.byteslice(offset, max).unpack1("Z*").force_encoding(Encoding::UTF_8)
    end

    def service_lookup(conn, i)
      b = fill(Native::F[:hev2_report_service_lookup], conn, i, Layout::REPORT_SERVICE_LOOKUP_SIZE)
      start = seconds(b.unpack1("d", offset: SL[:start_ms]))
      finish = seconds(b.unpack1("d", offset: SL[:end_ms]))
      {
        query: ABI::REPORT_QUERY_NAMES.fetch(b.unpack1("l", offset: SL[:query]), "unknown"),
        name: text(b, SL[:name], HOSTLEN),
        state: ABI::REPORT_SERVICE_LOOKUP_NAMES.fetch(b.unpack1("l", offset: SL[:state]), "unknown"),
        start: start, end: finish, duration: finish - start,
        records: b.unpack1("l", offset: SL[:n_records]),
        addresses: b.unpack1("l", offset: SL[:n_addrs]),
        eai: b.unpack1("l", offset: SL[:eai]),
        errno: b.unpack1("l", offset: SL[:sys_errno]),
      }.freeze
    end

    def service(conn, i)
      b = fill(Native::F[:hev2_report_service], conn, i, Layout::REPORT_SERVICE_SIZE)
      {
        number: b.unpack1("l", offset: SV[:number]),
        priority: b.unpack1("l", offset: SV[:priority]),
        target: text(b, SV[:target], HOSTLEN),
        port: b.unpack1("l", offset: SV[:port]),
        alpn: text(b, SV[:alpn], ABI::ALPNLEN).split(",").freeze,
        ech: b.unpack1("l", offset: SV[:ech]) == 1,
        hints: b.unpack1("l", offset: SV[:n_hints]),
      }.freeze
    end

    def skipped(conn, i)
      b = fill(Native::F[:hev2_report_skipped], conn, i, Layout::REPORT_SKIPPED_SIZE)
      {
        priority: b.unpack1("l", offset: SK[:priority]),
        target: text(b, SK[:target], HOSTLEN),
        port: b.unpack1("l", offset: SK[:port]),
        reason: text(b, SK[:reason], ABI::REASONLEN),
        at: seconds(b.unpack1("d", offset: SK[:at_ms])),
      }.freeze
    end

    def replaced(conn, i)
      b = fill(Native::F[:hev2_report_replaced], conn, i, Layout::REPORT_REPLACED_SIZE)
      {
        service: b.unpack1("l", offset: RH[:service]),
        address: text(b, RH[:address], Layout::ADDRSTRLEN),
        family: FAMILIES[b.unpack1("l", offset: RH[:family])],
        port: b.unpack1("l", offset: RH[:port]),
        at: seconds(b.unpack1("d", offset: RH[:at_ms])),
      }.freeze
    end

    def lookup(conn, s, i)
      base = Scratch::REPORT_LOOKUP
      check(LOOKUP.call(conn, i, s.address + base))
      start = seconds(s.f64(base + LK[:start_ms]))
      finish = seconds(s.f64(base + LK[:end_ms]))
      {
        family: FAMILIES[s.i32(base + LK[:family])],
        state: ABI::REPORT_LOOKUP_NAMES.fetch(s.i32(base + LK[:state]), "unknown"),
        start: start, end: finish, duration: finish - start,
        addresses: s.i32(base + LK[:n_addrs]),
        eai: s.i32(base + LK[:eai]),
        errno: s.i32(base + LK[:sys_errno]),
      }.freeze
    end

    def attempt(conn, s, i)
      base = Scratch::REPORT_ATTEMPT
      check(ATTEMPT.call(conn, i, s.address + base))
      start = seconds(s.f64(base + AT[:start_ms]))
      finish = seconds(s.f64(base + AT[:end_ms]))
      {
        address: s.c_string(base + AT[:address], Layout::ADDRSTRLEN),
        family: FAMILIES[s.i32(base + AT[:family])],
        port: s.i32(base + AT[:port]),
        outcome: ABI::REPORT_ATTEMPT_NAMES.fetch(s.i32(base + AT[:outcome]), "unknown"),
        errno: s.i32(base + AT[:error]),
        bind_failed: s.i32(base + AT[:bind_failed]) == 1,
        start: start, end: finish, duration: finish - start,
        synthesized_from: (from = s.c_string(base + AT[:synthesized_from], Layout::ADDRSTRLEN)).empty? ? nil : from,
        service: s.i32(base + AT[:service]),
        origin: ABI::ORIGIN_NAMES.fetch(s.i32(base + AT[:origin]), ""),
      }.freeze
    end

    def phase(s, offset)
      return nil unless s.i32(offset + PHASE[:happened]) == 1

      start = seconds(s.f64(offset + PHASE[:start_ms]))
      finish = seconds(s.f64(offset + PHASE[:end_ms]))
      { start: start, end: finish, duration: finish - start }.freeze
    end

    # Milliseconds (the ABI's) to seconds, rounded to the microsecond the
    # library measures.
    def seconds(ms)
      (ms / 1000.0).round(6)
    end

    def check(rc)
      return if rc == Native::OK

      detail, = Native.last_error
      raise Error.new("hev2: #{detail.empty? ? Native.strerror(rc) : detail}", rc)
    end
  end
end

# frozen_string_literal: true

require "socket"
require_relative "hev2/version"
# The library first: its Go runtime starts on a thread of its own when it
# is loaded, and gets ready while the rest of the gem loads.
require_relative "hev2/native"
require_relative "hev2/errors"
require_relative "hev2/arguments"
require_relative "hev2/connector"

# Happy Eyeballs v2 (RFC 8305) connections for Ruby, backed by libhev2.
#
#   sock = Hev2.tcp("example.com", 443, connect_timeout: 5)
#   Hev2.tcp("example.com", 80) { |s| s.write("GET / HTTP/1.0\r\n\r\n"); s.read }
module Hev2
  class << self
    # Socket.tcp's signature and behaviour, raced as RFC 8305 says. Returns a
    # connected ::Socket (non-blocking, close-on-exec); with a block, yields
    # it, closes it afterwards and returns the block's value.
    #
    # **more: every other option of the library, named as its member of
    # hev2_options in include/hev2.h without the unit: a duration in
    # seconds (keepalive_ms is keepalive: 30), a flag true or false
    # (nodelay: true), a count an Integer; nil or absent is the library's
    # default (PlainOptions::KEYWORDS lists them, the header says what each
    # does). And the gem's own: family: (:ipv4/:ipv6), resolver:
    # (:system/:builtin), nameservers: (["IP", "IP:PORT", ...], built-in
    # resolver), addresses: (static IPs for host, not resolved), trace:
    # (called with each Hev2::Event), trace_files: ({svg: path, qlog: path,
    # chrome: path}, any of them: the race written by the library once
    # decided, won or failed; see docs/trace-names.md), report: (true keeps the
    # race's establishment report: Hev2.report_of), alpn: (with https_rr:
    # true, the protocols your TLS offers, an Array of Strings, default
    # ["h2", "http/1.1"]).
    #
    # https_rr: true adds the HTTPS query of Happy Eyeballs v3 (RFC 9460)
    # for a host name (the host for port 443, "_PORT._https.HOST"
    # otherwise): its services are tried first, on their own ports, the
    # origin's addresses last; Hev2.service_of(sock) says which won (the
    # exception's #hev2_service on a failure). The TLS server name stays
    # host. ech: true (your TLS uses ECH: the HTTPS answer is waited for,
    # up to ech_wait seconds, and the origin is not tried when every
    # service carries an ECH configuration).
    def tcp(host, port, local_host = nil, local_port = nil, resolv_timeout: nil,
            connect_timeout: nil, open_timeout: nil, fast_fallback: true, **more)
      sock = socket(::Socket, host, port, local_host, local_port, resolv_timeout,
                    connect_timeout, open_timeout, fast_fallback, more)
      return sock unless block_given?

      begin
        yield sock
      ensure
        sock.close unless sock.closed?
      end
    end

    # The establishment report (a frozen Hash, see Hev2::Report) of a socket
    # Hev2.tcp(..., report: true) returned; nil for any other socket.
    def report_of(sock)
      sock.instance_variable_defined?(:@hev2_report) ? sock.instance_variable_get(:@hev2_report) : nil
    end

    # What the HTTPS query of a socket Hev2.tcp(..., https_rr: true)
    # returned gave (a frozen Hash, see Hev2::Service): its state, and the
    # service the winner came from (nil: the origin's own addresses). nil
    # when no HTTPS query was made (https_rr off, an IP literal,
    # addresses:) and for any other socket.
    def service_of(sock)
      sock.instance_variable_defined?(:@hev2_service) ? sock.instance_variable_get(:@hev2_service) : nil
    end

    # Counters of the library (handles created, live, running, ...).
    def stats
      s = Scratch.acquire
      rc = Native::F[:hev2_stats].call(s.address + Scratch::STATS)
      raise Connector.call_error(rc, nil, 0) unless rc == Native::OK

      Layout::STATS.each_key.with_object({}) do |field, h|
        h[field] = s.u64(Scratch::STATS + Layout::STATS[field]) unless field == :size
      end
    ensure
      Scratch.release(s) if s
    end

    # Caps the connections running at once (library default 4096); beyond
    # it Hev2.tcp raises Hev2::Error (HEV2_ECAPACITY) without starting one.
    def max_handles=(max)
      raise TypeError, "max_handles must be an Integer" unless max.is_a?(Integer)

      rc = Native::F[:hev2_set_max_handles].call(max)
      raise ArgumentError, "max_handles #{max}: #{Native.last_error[0]}" unless rc == Native::OK
    end

    # The process-wide history (on when the library loads): the library
    # remembers, per network and host name, which family connected and
    # which lost a race (a blackhole, a refusal, a timeout), and tries the
    # one that works first for the history's lifetime (10 min, an option of
    # Hev2.tcp) after the failure. Off, no connection reads or feeds it;
    # per call: history: false.
    def history=(on)
      rc = Native::F[:hev2_set_history].call(on ? 1 : 0)
      raise Connector.call_error(rc, nil, 0) unless rc == Native::OK
    end

    def history?
      stats[:history_enabled] == 1
    end

    # Forgets everything the history learned, on every network.
    def clear_history
      rc = Native::F[:hev2_clear_history].call
      raise Connector.call_error(rc, nil, 0) unless rc == Native::OK

      true
    end

    # The libhev2 in use: its path and version number.
    def library
      { path: Native::PATH, version: Native::VERSION }
    end

    # Starts the library's runtime now (about 4 ms) instead of on the first
    # connection.
    def init
      rc = Native::F[:hev2_init].call
      raise Connector.call_error(rc, nil, 0) unless rc == Native::OK

      true
    end

    # Connects and wraps the winner in klass (::Socket, or ::TCPSocket for
    # hev2/replace). Used by Hev2.tcp and hev2/replace only.
    def socket(klass, host, port, local_host, local_port, resolv_timeout, connect_timeout,
               open_timeout, fast_fallback, more)
      if plain?(host, port, local_host, local_port, resolv_timeout, connect_timeout,
                open_timeout, fast_fallback, more) &&
         (name = Arguments.host_name(host))
        Connector.connect(name, port, nil, klass)
      else
        req = Arguments.build(host, port, local_host, local_port, resolv_timeout,
                              connect_timeout, open_timeout, fast_fallback, more, klass)
        Connector.connect(req.host, req.port, req, klass)
      end
    end

    private

    # The common call (a host String, a port 1..65535, no option) skips the
    # option struct entirely: hev2_connect gets NULL options. Any other
    # port goes through Arguments.port_number, which answers as Ruby does.
    def plain?(host, port, local_host, local_port, resolv_timeout, connect_timeout,
               open_timeout, fast_fallback, more)
      host.is_a?(String) && port.is_a?(Integer) && port.between?(1, 65_535) &&
        local_host.nil? && local_port.nil? && resolv_timeout.nil? && connect_timeout.nil? &&
        open_timeout.nil? && fast_fallback == true && more.empty?
    end
  end
end

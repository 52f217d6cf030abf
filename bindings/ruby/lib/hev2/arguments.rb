# frozen_string_literal: true

require "socket"
require_relative "abi"
require_relative "errors"
require_relative "plain_options"

module Hev2
  # Everything one call to Hev2.tcp asked for, converted to what the C ABI
  # takes. Only Ruby's own checks are made here: a wrong type is the
  # TypeError Ruby raises, and what Ruby itself converts (a host as
  # ext/socket takes it, a service name through Socket.getservbyname, a
  # local_host name through Ruby's resolver) raises what Ruby raises for it.
  # Whether a value makes sense (ranges, overlong hosts, timeouts that
  # exclude each other) is the library's rule, stated once in its core:
  # Connector.call_error maps its refusals to Ruby's exceptions. The plain
  # options (PlainOptions::FIELDS: timeouts, delays, flags, counts) are
  # generated from include/hev2.h's notes; the members named here are the
  # gem's own.
  Request = Struct.new(
    :host, :port, :local_host, :local_port,
    *PlainOptions::FIELDS,
    :family, :resolver, :nameservers, :addresses, :trace, :trace_files, :report, :alpn,
    keyword_init: true
  )

  # Converts Socket.tcp-style arguments into a Request.
  module Arguments
    # The keywords accepted on top of Socket.tcp's own (the `**more` of
    # Hev2.tcp): the plain options (generated), then the gem's own.
    # Durations are in seconds, like Ruby's timeouts.
    EXTRA_KEYWORDS = (PlainOptions::KEYWORDS + %i[
      family resolver nameservers addresses trace trace_files report alpn
    ]).freeze

    # trace_files: keys -> the library's trace formats (hev2_write_trace).
    TRACE_FORMATS = { svg: ABI::TRACE_SVG, qlog: ABI::TRACE_QLOG, chrome: ABI::TRACE_CHROME }.freeze

    FAMILIES = {
      nil => :unspec, :unspec => :unspec, :UNSPEC => :unspec,
      :ipv4 => :ipv4, :inet => :ipv4, :INET => :ipv4, 4 => :ipv4,
      :ipv6 => :ipv6, :inet6 => :ipv6, :INET6 => :ipv6, 6 => :ipv6,
      Socket::AF_INET => :ipv4, Socket::AF_INET6 => :ipv6, Socket::AF_UNSPEC => :unspec,
    }.freeze

    RESOLVERS = %i[system builtin].freeze

    module_function

    # klass: the class whose method was called (::Socket for Socket.tcp and
    # Hev2.tcp, ::TCPSocket under hev2/replace), whose conversions are
    # followed where Ruby's two differ.
    def build(host, port, local_host, local_port, resolv_timeout, connect_timeout,
              open_timeout, fast_fallback, more, klass = ::Socket)
      unknown = more.keys - EXTRA_KEYWORDS
      unless unknown.empty?
        raise ArgumentError, "unknown keyword#{"s" if unknown.size > 1}: #{unknown.map(&:inspect).join(", ")}"
      end

      Request.new(
        host: (name = host_name(host)),
        port: port_number(port, "port", name, klass),
        local_host: local_address(local_host, name),
        local_port: port_number(local_port, "local_port", name, klass),
        resolv_timeout: resolv_timeout(resolv_timeout, name, fast_fallback, klass),
        connect_timeout: duration(connect_timeout, "connect_timeout"),
        open_timeout: duration(open_timeout, "open_timeout"),
        # truthiness, as Socket.tcp reads it (fast_fallback: nil is serial)
        fast_fallback: fast_fallback ? true : false,
        # the plain options of more, each checked as its kind (generated)
        **PlainOptions.keywords(more),
        family: family(more[:family]),
        resolver: resolver(more[:resolver]),
        nameservers: nameservers(more[:nameservers]),
        addresses: addresses(more[:addresses]),
        trace: callable(more[:trace]),
        trace_files: trace_files(more[:trace_files]),
        report: more.key?(:report) ? boolean(more[:report], "report") : false,
        alpn: alpn(more[:alpn]),
      )
    end

    # What Ruby's own socket calls accept as a host (ext/socket's host_str):
    # nil and "" are the loopback addresses (getaddrinfo(NULL, ...)),
    # "<any>" / "<broadcast>" are 0.0.0.0 / 255.255.255.255, an Integer is
    # an IPv4 address in host order. What getaddrinfo would refuse raises the
    # same Socket::ResolutionError (SocketError before 3.3) it would: "[::1]"
    # (EAI_NONAME), a zone that is no interface index on a non-link-local
    # address (getaddrinfo's rule). A NUL byte and names over 1024 bytes are
    # the ArgumentError Ruby's own conversion raises; a name the library
    # refuses (over 253 bytes) is getaddrinfo's EAI_NONAME (call_error).
    def host_name(host)
      return nil if host.nil?
      return int_address(host) if host.is_a?(Integer)

      name = String.try_convert(host) or
        raise TypeError, "no implicit conversion of #{host.class} into String"
      raise ArgumentError, "string contains null byte" if name.include?("\0")
      raise ArgumentError, "hostname too long (#{name.bytesize})" if name.bytesize >= 1025
      return nil if name.empty?
      return "0.0.0.0" if name == "<any>"
      return "255.255.255.255" if name == "<broadcast>"
      raise Errors.resolution(Errors::EAI_NONAME, 0, name, nil) if name.start_with?("[")
      return zoned(name) if name.include?("%")
      name
    end

    def int_address(n)
      raise RangeError, "integer #{n} too big to convert to an IPv4 address" unless n.bit_length <= 64
      [n & 0xffff_ffff].pack("N").unpack("C4").join(".")
    end

    # An IPv6 literal with a zone: checked numerically by getaddrinfo
    # (AI_NUMERICHOST: no lookup), as Ruby's own calls have it checked. The
    # kernel ignores a zone on a non-link-local address: it is dropped.
    def zoned(name)
      # Loaded before anything can raise: the rescue clause below names
      # IPAddr::Error, and naming it while ipaddr is not loaded would turn
      # any exception passing through (a resolution error) into a NameError.
      ip = ipaddr
      begin
        Addrinfo.getaddrinfo(name, nil, nil, :STREAM, nil, Socket::AI_NUMERICHOST)
      rescue SocketError => e
        code = e.respond_to?(:error_code) ? e.error_code : Errors::EAI_NONAME
        raise Errors.resolution(code || Errors::EAI_NONAME, 0, name, nil)
      end
      addr, = name.split("%", 2)
      ip.new(addr).link_local? ? name : addr
    rescue IPAddr::Error
      name
    end

    # IPAddr, required on first use: the paths that need it (local_host, a
    # zone, a negative resolv_timeout, an error's class) are rare, and
    # requiring ipaddr at load would add its cost to every `require "hev2"`.
    def ipaddr
      require "ipaddr" unless defined?(::IPAddr)
      ::IPAddr
    end

    # What strtoul, and so getaddrinfo, reads as a decimal number (a
    # String of any other form is a service name, looked up in
    # /etc/services).
    NUMERIC_SERVICE = /\A[ \t\n\v\f\r]*[+-]?[0-9]+\z/
    # The common numeric String ("443"), whose port is its value.
    PLAIN_DIGITS = /\A[0-9]{1,5}\z/

    # The port Ruby's own call (Socket.tcp, or TCPSocket.new for klass
    # TCPSocket) would connect to, or what it raises instead. Ruby hands
    # getaddrinfo the port as a service: an Integer as its decimal text, a
    # String as is; nil (and "") is no service at all, port 0.
    # getaddrinfo reads a decimal number with strtoul and keeps it as a C
    # int: a negative int ("-1", "4294967295") is looked up as a service
    # name (EAI_SERVICE), any other is cut to 16 bits (65536 + 80 is port
    # 80). Ruby's own conversion raises before that: TypeError for a Float,
    # a Symbol or an Integer beyond a Fixnum, RangeError where Socket.tcp's
    # Addrinfo.getaddrinfo takes the number as a C int. So the answer is
    # asked of Ruby itself, by the call its method makes (a lookup of the
    # service alone, with no host: nothing is resolved), and raised as Ruby
    # raises it, a resolution error keeping its getaddrinfo code.
    #
    # Where Ruby would connect to another port than the one asked for (a
    # number that getaddrinfo cuts), hev2 raises an ArgumentError instead
    # (README, "Where Hev2.tcp differs on purpose"). Port 0 (nil, "") is
    # passed on: the library refuses it as a remote port (a documented
    # difference too) and takes it as a local one (any port).
    def port_number(value, what, host = nil, klass = ::Socket)
      return value if value.is_a?(Integer) && value.between?(1, 65_535)
      return value.to_i if value.is_a?(String) && PLAIN_DIGITS.match?(value) && value.to_i.between?(1, 65_535)
      return 0 if value.nil?

      got = ruby_port(value, host, klass)
      asked = if value.is_a?(Integer)
                value
              elsif (text = String.try_convert(value)) && NUMERIC_SERVICE.match?(text)
                text.to_i
              else
                got # a service name: its port is the one asked for
              end
      return got if asked == got

      raise ArgumentError, "hev2: invalid #{what} #{value.inspect}: getaddrinfo would take it as port #{got} " \
                           "(it cuts a number to 16 bits); hev2 connects only to the port asked for " \
                           "(#{Errors.target(host, value)})"
    end

    # The port getaddrinfo gives for value as Ruby passes it, through the
    # call Ruby's own method makes: Socket.tcp resolves with
    # Addrinfo.getaddrinfo, TCPSocket.new with the C path that
    # Socket.getaddrinfo shares (they differ: only the first refuses a
    # number beyond a C int). AI_PASSIVE and no host: only the service is
    # looked up; false: no reverse lookup of the address.
    def ruby_port(value, host, klass)
      if klass <= ::TCPSocket
        ::Socket.getaddrinfo(nil, value, ::Socket::AF_INET, ::Socket::SOCK_STREAM, nil,
                             ::Socket::AI_PASSIVE, false)[0][1]
      else
        ::Addrinfo.getaddrinfo(nil, value, ::Socket::AF_INET, ::Socket::SOCK_STREAM, nil,
                               ::Socket::AI_PASSIVE)[0].ip_port
      end
    rescue ::SocketError => e
      raise Errors.resolution(Errors.eai_of(e), 0, host, value)
    end

    # The core binds an IP literal. A name is resolved here, once, by the
    # system resolver, as Socket.tcp does with local_host.
    # A name's address of the family of a literal remote host, when it has
    # one (Ruby tries local addresses of the remote's family).
    def local_address(value, remote = nil)
      return nil if value.nil?
      return int_address(value) if value.is_a?(Integer)
      name = String.try_convert(value) or
        raise TypeError, "no implicit conversion of #{value.class} into String"
      return ipaddr.new(name).to_s if ip_literal?(name)
      return nil if name.empty?
      ais = Addrinfo.getaddrinfo(name, nil, nil, :STREAM)
      want = remote && ip_literal?(remote) ? (remote.include?(":") ? :ipv6? : :ipv4?) : nil
      ai = (want && ais.find(&want)) || ais.first or
        raise SocketError, "local_host #{name.inspect}: no address"
      ai.ip_address
    end

    def ip_literal?(name)
      # ipaddr is loaded by this first call, before its rescue clause can
      # be evaluated.
      ipaddr.new(name)
      !name.include?("/")
    rescue IPAddr::Error
      false
    end

    # nil means "no limit" (as in Socket.tcp). Seconds, any real Numeric;
    # its range is the library's rule. NaN is no time: the RangeError Ruby
    # raises converting it (Socket.tcp's connect_timeout: Float::NAN).
    def duration(value, what)
      return nil if value.nil?
      raise TypeError, "#{what} must be Numeric, not #{value.class}" unless value.is_a?(Numeric)
      raise RangeError, "NaN out of Time range (#{what})" if value.respond_to?(:nan?) && value.nan?
      value
    end

    # resolv_timeout, a negative one read as the running Ruby reads it
    # (the differential test holds each Ruby to it): an IP literal, with
    # nothing to resolve, connects on every Ruby. For a name, Ruby 3.1
    # ignores it (it bounds no lookup there, whatever its sign), and so does
    # 3.4 with fast_fallback: false; 3.4's Socket.tcp sets its deadline at
    # now + resolv_timeout, already past: no time at all, as 0 (ETIMEDOUT
    # unless the addresses are there at its first look); 3.4's TCPSocket.new
    # converts it with rb_time_interval, whose ArgumentError it raises.
    # (Untested: 3.2 and 3.3 are read as 3.1.) The library itself refuses
    # a negative timeout, its rule for every language.
    def resolv_timeout(value, name, fast_fallback, klass)
      seconds = duration(value, "resolv_timeout")
      return seconds unless seconds&.negative?
      return nil if name && ip_literal?(name)
      return nil if RUBY_VERSION < "3.4" || !fast_fallback
      raise ArgumentError, "time interval must not be negative" if klass <= ::TCPSocket

      0
    end

    # trace: anything with #call, given each Hev2::Event after the race.
    def callable(value)
      return nil if value.nil?
      raise TypeError, "trace must respond to #call" unless value.respond_to?(:call)
      value
    end

    # trace_files: { svg: path, qlog: path, chrome: path } (any of them):
    # [[format, path], ...], or nil.
    def trace_files(value)
      return nil if value.nil?
      raise TypeError, "trace_files must be a Hash of format => path, not #{value.class}" unless value.is_a?(Hash)

      value.map do |format, path|
        code = TRACE_FORMATS[format.respond_to?(:to_sym) ? format.to_sym : format] or
          raise ArgumentError, "trace_files: unknown format #{format.inspect} (#{TRACE_FORMATS.keys.join(", ")})"
        path = File.path(path) if path.respond_to?(:to_path) || path.is_a?(String)
        raise TypeError, "trace_files[#{format.inspect}] must be a path" unless path.is_a?(String)
        raise ArgumentError, "trace_files[#{format.inspect}] must be a non-empty path without NUL" if path.empty? || path.include?("\0")

        [code, path]
      end
    end

    def boolean(value, what)
      return value if value == true || value == false
      raise TypeError, "#{what} must be true or false, not #{value.inspect}"
    end

    # An Integer option (nil: the library's default); its range is the
    # library's rule (first_address_family_count: 0..64, 0 the default).
    def integer(value, what)
      return nil if value.nil?
      raise TypeError, "#{what} must be an Integer" unless value.is_a?(Integer)
      value
    end

    def family(value)
      FAMILIES.fetch(value) do
        raise ArgumentError, "family #{value.inspect}: use :ipv4, :ipv6 or nil"
      end
    end

    # A name to convert to the library's constant (nil: the library's
    # default, the built-in resolver when nameservers are given). Which
    # resolver takes nameservers is the library's rule.
    def resolver(value)
      return nil if value.nil?
      return value if RESOLVERS.include?(value)

      raise ArgumentError, "resolver #{value.inspect}: use :system or :builtin"
    end

    # ["192.0.2.53", "[2001:db8::53]:5353", ...] as given; the library parses
    # them and reports the bad one.
    def nameservers(value)
      return nil if value.nil?
      list = Array.try_convert(value) or raise TypeError, "nameservers must be an Array of Strings"
      list.map { |s| list_item(s, "nameserver", ",") }
    end

    # Static addresses for the host (like curl --resolve): the host is not
    # resolved; these IP literals are raced instead (the library parses
    # them and reports the bad one).
    def addresses(value)
      return nil if value.nil?
      list = Array.try_convert(value) or raise TypeError, "addresses must be an Array of IP address Strings"
      list.map { |a| list_item(a, "address", ",; \t\r\n") }
    end

    # alpn: the protocols the caller's TLS offers, in its order (["h2",
    # "http/1.1"]; nil: the library's default, those two), each one name
    # of the library's comma-separated list: not empty, no comma or NUL.
    # How many and how long is the library's rule (at most 16, 1 to 255
    # bytes each): its ArgumentError.
    def alpn(value)
      return nil if value.nil?
      list = value.is_a?(String) ? nil : Array.try_convert(value)
      raise TypeError, "alpn must be an Array of Strings such as [\"h2\", \"http/1.1\"], not #{value.class}" unless list
      raise ArgumentError, "alpn is empty: name at least one protocol (or leave it out for h2 and http/1.1)" if list.empty?

      list.map do |p|
        s = String.try_convert(p) or raise TypeError, "alpn entry #{p.inspect} is not a String"
        raise ArgumentError, "alpn holds an empty protocol name" if s.empty?
        if s.count(",\0").positive?
          raise ArgumentError, "alpn entry #{s.inspect} holds a comma or a NUL (one protocol name per entry)"
        end

        s
      end
    end

    # A String that goes into one of the library's lists ("a,b", "N:A;...")
    # must not hold their separators, which would change the list.
    def list_item(value, what, separators)
      s = String.try_convert(value) or raise TypeError, "#{what} #{value.inspect} is not a String"
      if s.count(separators + "\0").positive?
        raise ArgumentError, "#{what} #{s.inspect} holds a separator of the library's list (#{separators.strip.inspect})"
      end
      s
    end
  end
end

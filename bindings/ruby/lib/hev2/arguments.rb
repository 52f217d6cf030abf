# frozen_string_literal: true

require "socket"
require "ipaddr"

module Hev2
  # Everything one call to Hev2.tcp asked for, checked and converted to the
  # units the C ABI takes. Bad input raises ArgumentError/TypeError here,
  # before the library is ever entered.
  Request = Struct.new(
    :host, :port, :local_host, :local_port,
    :resolv_timeout, :connect_timeout, :open_timeout, :fast_fallback,
    :resolution_delay, :connection_attempt_delay, :first_address_family_count,
    :family, :resolver, :nameservers, :addresses, :nodelay, :keepalive, :trace,
    keyword_init: true
  )

  # Converts Socket.tcp-style arguments into a Request.
  module Arguments
    # The keywords accepted on top of Socket.tcp's own (the `**more` of
    # Hev2.tcp). Durations are in seconds, like Ruby's timeouts.
    EXTRA_KEYWORDS = %i[
      resolution_delay connection_attempt_delay first_address_family_count
      family resolver nameservers addresses nodelay keepalive trace
    ].freeze

    FAMILIES = {
      nil => :unspec, :unspec => :unspec, :UNSPEC => :unspec,
      :ipv4 => :ipv4, :inet => :ipv4, :INET => :ipv4, 4 => :ipv4,
      :ipv6 => :ipv6, :inet6 => :ipv6, :INET6 => :ipv6, 6 => :ipv6,
      Socket::AF_INET => :ipv4, Socket::AF_INET6 => :ipv6, Socket::AF_UNSPEC => :unspec,
    }.freeze

    RESOLVERS = %i[system builtin].freeze

    module_function

    def build(host, port, local_host, local_port, resolv_timeout, connect_timeout,
              open_timeout, fast_fallback, more)
      unknown = more.keys - EXTRA_KEYWORDS
      unless unknown.empty?
        raise ArgumentError, "unknown keyword#{"s" if unknown.size > 1}: #{unknown.map(&:inspect).join(", ")}"
      end
      if open_timeout && (resolv_timeout || connect_timeout)
        raise ArgumentError, "Cannot specify open_timeout along with connect_timeout or resolv_timeout"
      end

      Request.new(
        host: host_name(host),
        port: port_number(port, "port"),
        local_host: local_address(local_host),
        local_port: local_port.nil? ? 0 : port_number(local_port, "local_port"),
        resolv_timeout: duration(resolv_timeout, "resolv_timeout"),
        connect_timeout: duration(connect_timeout, "connect_timeout"),
        open_timeout: duration(open_timeout, "open_timeout"),
        # truthiness, as Socket.tcp reads it (fast_fallback: nil is serial)
        fast_fallback: fast_fallback ? true : false,
        resolution_delay: duration(more[:resolution_delay], "resolution_delay"),
        connection_attempt_delay: duration(more[:connection_attempt_delay], "connection_attempt_delay"),
        first_address_family_count: count(more[:first_address_family_count]),
        family: family(more[:family]),
        resolver: resolver(more[:resolver], more[:nameservers]),
        nameservers: nameservers(more[:nameservers]),
        addresses: addresses(more[:addresses]),
        nodelay: more.key?(:nodelay) ? boolean(more[:nodelay], "nodelay") : false,
        keepalive: duration(more[:keepalive], "keepalive"),
        trace: callable(more[:trace]),
      )
    end

    # nil stands for the loopback addresses, as getaddrinfo(NULL, ...) does.
    def host_name(host)
      return nil if host.nil?
      name = String.try_convert(host) or
        raise TypeError, "host must be a String, not #{host.class}"
      raise ArgumentError, "host is empty" if name.empty?
      raise ArgumentError, "host contains a NUL byte" if name.include?("\0")
      # getaddrinfo would answer EAI_NONAME for "[::1]"; say what to write.
      raise ArgumentError, "host #{name.inspect}: write IPv6 literals without brackets" if name.start_with?("[")
      name
    end

    # An Integer, a numeric String, or a service name from /etc/services
    # ("http"), like Socket.tcp.
    def port_number(value, what)
      n = case value
          when Integer then value
          when String
            if /\A[0-9]+\z/.match?(value)
              value.to_i
            else
              begin
                Socket.getservbyname(value, "tcp")
              rescue SocketError
                raise ArgumentError, "#{what} #{value.inspect} is not a number nor a known TCP service"
              end
            end
          else
            raise TypeError, "#{what} must be an Integer or a String, not #{value.class}"
          end
      raise ArgumentError, "#{what} #{n} out of range 0..65535" unless (0..65_535).cover?(n)
      n
    end

    # The core binds an IP literal. A name is resolved here, once, by the
    # system resolver, as Socket.tcp does with local_host.
    def local_address(value)
      return nil if value.nil?
      name = String.try_convert(value) or
        raise TypeError, "local_host must be a String, not #{value.class}"
      return IPAddr.new(name).to_s if ip_literal?(name)
      ai = Addrinfo.getaddrinfo(name, nil, nil, :STREAM).first or
        raise SocketError, "local_host #{name.inspect}: no address"
      ai.ip_address
    end

    def ip_literal?(name)
      IPAddr.new(name)
      !name.include?("/")
    rescue IPAddr::Error
      false
    end

    # nil means "no limit" (as in Socket.tcp). Seconds, Integer or Float.
    def duration(value, what)
      return nil if value.nil?
      raise TypeError, "#{what} must be Numeric, not #{value.class}" unless value.is_a?(Numeric)
      raise ArgumentError, "#{what} must not be negative (#{value})" if value.negative?
      raise ArgumentError, "#{what} #{value} is not finite" if value.respond_to?(:finite?) && !value.finite?
      raise ArgumentError, "#{what} #{value} exceeds one day" if value > 86_400
      value
    end

    # trace: anything with #call, given each Hev2::Event after the race.
    def callable(value)
      return nil if value.nil?
      raise TypeError, "trace must respond to #call" unless value.respond_to?(:call)
      value
    end

    def boolean(value, what)
      return value if value == true || value == false
      raise TypeError, "#{what} must be true or false, not #{value.inspect}"
    end

    def count(value)
      return nil if value.nil?
      raise TypeError, "first_address_family_count must be an Integer" unless value.is_a?(Integer)
      raise ArgumentError, "first_address_family_count #{value} out of range 1..64" unless (1..64).cover?(value)
      value
    end

    def family(value)
      FAMILIES.fetch(value) do
        raise ArgumentError, "family #{value.inspect}: use :ipv4, :ipv6 or nil"
      end
    end

    def resolver(value, servers)
      chosen = value.nil? ? (servers ? :builtin : :system) : value
      unless RESOLVERS.include?(chosen)
        raise ArgumentError, "resolver #{value.inspect}: use :system or :builtin"
      end
      if chosen == :system && servers
        raise ArgumentError, "nameservers: are used only by resolver: :builtin"
      end
      chosen
    end

    # ["192.0.2.53", "[2001:db8::53]:5353", ...] as given; the library parses
    # them and reports the bad one.
    def nameservers(value)
      return nil if value.nil?
      list = Array.try_convert(value) or raise TypeError, "nameservers must be an Array of Strings"
      raise ArgumentError, "nameservers is empty" if list.empty?
      list.map { |s| String.try_convert(s) or raise TypeError, "nameserver #{s.inspect} is not a String" }
    end

    # Static addresses for the host (like curl --resolve): the host is not
    # resolved; these IP literals are raced instead.
    def addresses(value)
      return nil if value.nil?
      list = Array.try_convert(value) or raise TypeError, "addresses must be an Array of IP address Strings"
      raise ArgumentError, "addresses is empty" if list.empty?
      list.map do |a|
        s = String.try_convert(a) or raise TypeError, "address #{a.inspect} is not a String"
        raise ArgumentError, "address #{s.inspect} is not an IP address" unless ip_literal?(s)
        IPAddr.new(s).to_s
      end
    end
  end
end

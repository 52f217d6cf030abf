# frozen_string_literal: true

require "socket"
require "fiddle"

module Hev2
  # A failure of the library itself (bad options it refused, a cap on
  # handles reached, a stale handle), not of the connection.
  class Error < StandardError
    # The HEV2_E* status the library returned.
    attr_reader :status

    def initialize(message = nil, status = nil)
      super(message)
      @status = status
    end
  end

  # The library was loaded by a parent process that then forked. The Go
  # runtime does not survive fork, so the child cannot use it; the library
  # says so at once (HEV2_EFORKED) instead of hanging.
  class ForkedError < Error; end

  # A name that did not resolve. It is a Socket::ResolutionError on Rubies
  # that have one (3.3+) and a SocketError before, so existing rescues keep
  # working, and #error_code answers the getaddrinfo code (Socket::EAI_*) on
  # every Ruby.
  class ResolutionError < (defined?(::Socket::ResolutionError) ? ::Socket::ResolutionError : ::SocketError)
    def initialize(message = nil, error_code = nil)
      super(message)
      @hev2_error_code = error_code
    end

    def error_code
      @hev2_error_code
    end
  end

  # Builds the exceptions Hev2.tcp raises, with messages naming host and port.
  module Errors
    module_function

    def target(host, port)
      "#{host.nil? ? "localhost" : host.inspect} port #{port}"
    end

    # A connection failure: the Errno::* of the errno (Errno::ECONNREFUSED…).
    def connection(errno, host, port, detail = nil)
      msg = +"connect(2) for #{target(host, port)}"
      msg << " (#{detail})" if detail && !detail.empty?
      SystemCallError.new(msg, errno)
    end

    # A getaddrinfo failure; EAI_SYSTEM becomes the Errno::* of the errno
    # captured on the resolver's thread (Ruby Bug #20198).
    def resolution(eai, errno, host, port, detail = nil)
      if eai == eai_system && errno && errno != 0
        return SystemCallError.new("getaddrinfo(3) for #{target(host, port)}", errno)
      end
      msg = +"getaddrinfo(3) for #{target(host, port)}: #{gai_strerror(eai)}"
      msg << " (#{detail})" if detail
      ResolutionError.new(msg, eai)
    end

    # A timeout the caller gave, raised as the running Ruby raises it:
    # open_timeout: IO::TimeoutError where it exists (3.2+; what Ruby 4.0
    # raises), Errno::ETIMEDOUT on 3.1. connect_timeout: Errno::ETIMEDOUT
    # "user specified timeout" (Socket.tcp); TCPSocket.new (hev2/replace)
    # raises IO::TimeoutError where Ruby's own TCPSocket.new waits with
    # IO#wait (3.2+: on 3.4 only off its Happy Eyeballs path, i.e. an IP
    # literal or fast_fallback: false). resolv_timeout: Errno::ETIMEDOUT
    # from 3.4 (Ruby's Happy Eyeballs); before, the getaddrinfo timeout's
    # resolution error (EAI_AGAIN: SocketError, Socket::ResolutionError on
    # 3.3).
    def timeout(kind, host, port, klass = ::Socket, req = nil)
      msg = "user specified timeout (#{kind}) for #{target(host, port)}"
      io_timeout = defined?(::IO::TimeoutError)
      case kind
      when :open_timeout
        return ::IO::TimeoutError.new(msg) if io_timeout
      when :connect_timeout
        if io_timeout && klass <= ::TCPSocket &&
           (RUBY_VERSION < "3.4" || !req&.fast_fallback || Arguments.ip_literal?(host.to_s))
          return ::IO::TimeoutError.new(msg)
        end
      when :resolv_timeout
        return ResolutionError.new(msg, EAI_AGAIN) if RUBY_VERSION < "3.4"
      end
      Errno::ETIMEDOUT.new(msg)
    end

    # local_host of a family no remote address has: Socket.tcp's
    # SocketError; TCPSocket.new's bind/connect errno (EAFNOSUPPORT for an
    # IPv6 local address, EINVAL for an IPv4 one).
    def local_family(req, host, port, klass)
      msg = "no appropriate local address (local_host #{req.local_host}) for #{target(host, port)}"
      return ::SocketError.new(msg) unless klass <= ::TCPSocket

      SystemCallError.new(msg, req.local_host.include?(":") ? Errno::EAFNOSUPPORT::Errno : Errno::EINVAL::Errno)
    end

    GAI_STRERROR = Fiddle::Function.new(Fiddle.dlopen(nil)["gai_strerror"], [Fiddle::TYPE_INT],
                                        Fiddle::TYPE_VOIDP)
    private_constant :GAI_STRERROR

    # The C library's text for a getaddrinfo code.
    def gai_strerror(eai)
      GAI_STRERROR.call(eai).to_s
    end

    # The getaddrinfo code of a resolution error Ruby raised: its
    # error_code (3.3+), else the code whose text ends its message (a
    # SocketError of 3.1 carries only "getaddrinfo: <gai_strerror>"), else
    # EAI_SERVICE (Ruby's resolution errors over a port are a service's).
    def eai_of(error)
      code = error.error_code if error.respond_to?(:error_code)
      return code if code

      text = error.message.sub(/\Agetaddrinfo: /, "")
      ::Socket.constants.grep(/\AEAI_/).each do |name|
        c = ::Socket.const_get(name)
        return c if c.is_a?(Integer) && c.negative? && gai_strerror(c) == text
      end
      EAI_SERVICE
    end

    def eai_system
      defined?(::Socket::EAI_SYSTEM) ? ::Socket::EAI_SYSTEM : -11
    end

    EAI_NONAME = defined?(::Socket::EAI_NONAME) ? ::Socket::EAI_NONAME : -2
    EAI_SERVICE = defined?(::Socket::EAI_SERVICE) ? ::Socket::EAI_SERVICE : -8
    EAI_AGAIN = defined?(::Socket::EAI_AGAIN) ? ::Socket::EAI_AGAIN : -3
  end
end

module Hev2
  # Extra facts hev2 attaches to the exceptions it raises (they stay the
  # usual classes; this only adds readers).
  module Failure
    # :resolv_timeout, :connect_timeout, :open_timeout, or nil.
    attr_accessor :hev2_timeout
    # The getaddrinfo code behind the failure (Socket::EAI_*), or nil.
    attr_accessor :hev2_eai
    # The race's establishment report (Hev2::Report) when Hev2.tcp was
    # given report: true, else nil.
    attr_accessor :hev2_report
    # What the HTTPS query gave (Hev2::Service) when Hev2.tcp was given
    # https_rr: true and a query was made, else nil.
    attr_accessor :hev2_service
  end

  EAI_NAMES = Socket.constants.grep(/\AEAI_/).each_with_object({}) do |name, h|
    h[Socket.const_get(name)] ||= name.to_s
  end.freeze
  private_constant :EAI_NAMES

  # The scenario contract's "error" object for an exception from Hev2.tcp.
  def self.describe_error(error)
    timeout = error.respond_to?(:hev2_timeout) ? error.hev2_timeout : nil
    eai = error.respond_to?(:hev2_eai) ? error.hev2_eai : nil
    eai ||= error.error_code if error.is_a?(ResolutionError) && !timeout
    errno = if error.is_a?(SystemCallError) && error.class.name&.start_with?("Errno::")
              error.class.name.delete_prefix("Errno::")
            elsif timeout
              "ETIMEDOUT"
            else
              ""
            end
    {
      "errno" => errno,
      "eai" => eai ? EAI_NAMES.fetch(eai, "EAI_#{eai}") : "",
      "timeout" => timeout ? timeout.to_s : "",
      "message" => "#{error.class}: #{error.message}",
    }
  end
end

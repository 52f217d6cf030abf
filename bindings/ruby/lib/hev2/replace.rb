# frozen_string_literal: true

require "socket"
require_relative "../hev2"

module Hev2
  # `require "hev2/replace"` routes Socket.tcp, TCPSocket.new and
  # TCPSocket.open through Hev2.tcp, so code that does not know about hev2
  # (Net::HTTP, most HTTP clients, database drivers) gets Happy Eyeballs and
  # an interruptible, GVL-free wait. Nothing changes unless this file is
  # required.
  #
  # Hev2::Replace.defaults = {...} gives hev2 options to every routed call
  # that does not pass them itself (resolver: :builtin, nameservers: [...],
  # connection_attempt_delay: ...), as Hev2.tcp takes them, plus the
  # setting https_rr: the calls see a host and a port, not a URL, so true
  # asks the HTTPS record (Happy Eyeballs v3) for connections to port 443,
  # an Array of ports for those ([443, 8443]). The record may redirect the
  # connection to another port and target; Net::HTTP's TLS still sends the
  # URL's host as its server name and checks the certificate against it.
  module Replace
    # Prepended to Socket's singleton class.
    module SocketTCP
      def tcp(host, port, local_host = nil, local_port = nil, **options, &block)
        Hev2.tcp(host, port, local_host, local_port, **Replace.options_for(options, port), &block)
      end
    end

    # Prepended to TCPSocket's singleton class. Only TCPSocket itself and
    # subclasses that keep its initialize are routed: TCPServer (a subclass
    # with another meaning) and classes with their own initialize are not.
    module TCPSocketNew
      def new(*args, **options, &block)
        return super unless Replace.routed?(self)
        unless (2..4).cover?(args.size)
          raise ArgumentError, "wrong number of arguments (given #{args.size}, expected 2..4)"
        end

        host, port, local_host, local_port = args
        options = Replace.options_for(options, port)
        Hev2.socket(self, host, port, local_host, local_port, options.delete(:resolv_timeout),
                    options.delete(:connect_timeout), options.delete(:open_timeout),
                    options.key?(:fast_fallback) ? options.delete(:fast_fallback) : true, options)
      end

      # IO.open allocates without calling new, so open is routed as well; it
      # yields and closes like IO.open.
      def open(*args, **options, &block)
        return super unless Replace.routed?(self)

        sock = new(*args, **options)
        return sock unless block_given?

        begin
          yield sock
        ensure
          sock.close unless sock.closed?
        end
      end
    end

    @defaults = {}.freeze
    @https_ports = [].freeze

    class << self
      # The hev2 options every routed call gets unless it passes its own,
      # https_rr as the setting above (Hev2::Replace.https_ports).
      attr_reader :defaults, :https_ports

      # Checks the options as Hev2.tcp would (their types; their values are
      # the library's to judge at the first connection) and uses them from
      # now on.
      def defaults=(options)
        raise TypeError, "defaults must be a Hash of Hev2.tcp options, not #{options.class}" unless options.is_a?(Hash)

        options = options.dup
        ports = https_ports_of(options.delete(:https_rr))
        named = %i[resolv_timeout connect_timeout open_timeout]
        Arguments.build("localhost", 1, nil, nil, *named.map { |k| options[k] },
                        options.key?(:fast_fallback) ? options[:fast_fallback] : true,
                        options.except(*named, :fast_fallback))
        @defaults = options.freeze
        @https_ports = ports
      end

      # A routed call's options: the defaults (its own win) and, for a port
      # of https_ports, https_rr: true unless it chose https_rr itself.
      def options_for(options, port)
        return options if @defaults.empty? && @https_ports.empty?

        merged = @defaults.merge(options)
        merged[:https_rr] = true if !options.key?(:https_rr) && @https_ports.include?(port_number(port))
        merged
      end

      def routed?(klass)
        klass <= ::TCPSocket && !(klass <= ::TCPServer) &&
          klass.instance_method(:initialize).owner == ::TCPSocket
      end

      private

      # https_rr's setting: nil/false (off), true ([443]), or ports.
      def https_ports_of(value)
        return [].freeze if value.nil? || value == false
        return [443].freeze if value == true

        list = Array.try_convert(value) or
          raise TypeError, "https_rr must be true, false or an Array of ports, not #{value.class}"
        raise ArgumentError, "https_rr: no port (false turns it off)" if list.empty?

        list.map do |p|
          raise TypeError, "https_rr ports must be Integers, not #{p.inspect}" unless p.is_a?(Integer)
          raise ArgumentError, "https_rr port #{p} is not 1..65535" unless p.between?(1, 65_535)

          p
        end.uniq.freeze
      end

      # The port a call asked for, or nil (the call raises its own error).
      def port_number(port)
        Arguments.port_number(port, "port")
      rescue StandardError
        nil
      end
    end
  end

  Socket.singleton_class.prepend(Replace::SocketTCP)
  TCPSocket.singleton_class.prepend(Replace::TCPSocketNew)
end

# frozen_string_literal: true

require "socket"
require_relative "../hev2"

module Hev2
  # `require "hev2/replace"` routes Socket.tcp, TCPSocket.new and
  # TCPSocket.open through Hev2.tcp, so code that does not know about hev2
  # (Net::HTTP, most HTTP clients, database drivers) gets Happy Eyeballs and
  # an interruptible, GVL-free wait. Nothing changes unless this file is
  # required. Hev2::Replace.original_tcp is Ruby's own Socket.tcp.
  module Replace
    # Prepended to Socket's singleton class.
    module SocketTCP
      def tcp(host, port, local_host = nil, local_port = nil, **options, &block)
        Hev2.tcp(host, port, local_host, local_port, **options, &block)
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

    class << self
      def routed?(klass)
        klass <= ::TCPSocket && !(klass <= ::TCPServer) &&
          klass.instance_method(:initialize).owner == ::TCPSocket
      end
    end
  end

  Socket.singleton_class.prepend(Replace::SocketTCP)
  TCPSocket.singleton_class.prepend(Replace::TCPSocketNew)
end

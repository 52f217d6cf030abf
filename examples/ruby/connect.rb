#!/usr/bin/env ruby
# frozen_string_literal: true

# Hev2.tcp used directly, as Socket.tcp would be, with the race printed as a
# timeline.
#
#   ruby -I bindings/ruby/lib examples/ruby/connect.rb HOST PORT [CONNECT_TIMEOUT]
#
# Without arguments it connects to a listener it opens on 127.0.0.1.
require "socket"
require "hev2"

host, port, timeout = ARGV
if host.nil?
  server = TCPServer.new("127.0.0.1", 0)
  host = "127.0.0.1"
  port = server.addr[1]
end

print_event = lambda do |e|
  where = e.address.empty? ? "" : " #{e.address}"
  why = e.error.zero? ? "" : " (#{SystemCallError.new(nil, e.error).message})"
  printf("%9.3f ms  %-18s%s%s\n", e.at_ms, e.kind, where, why)
end

begin
  Hev2.tcp(host, Integer(port), connect_timeout: timeout&.to_f, trace: print_event) do |sock|
    remote = sock.remote_address
    puts "connected to #{remote.ip_address} port #{remote.ip_port} (#{remote.ipv6? ? "IPv6" : "IPv4"})"
  end
rescue SystemCallError => e # Errno::ECONNREFUSED, Errno::ETIMEDOUT, ...
  warn "connection failed: #{e.class}: #{e.message}"
  exit 1
rescue SocketError => e # Socket::ResolutionError on Ruby 3.3+
  code = e.respond_to?(:error_code) ? " (error_code #{e.error_code})" : ""
  warn "name resolution failed: #{e.message}#{code}"
  exit 1
ensure
  server&.close
end

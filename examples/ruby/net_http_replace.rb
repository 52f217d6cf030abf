#!/usr/bin/env ruby
# frozen_string_literal: true

# Existing code gets Happy Eyeballs without changes: after
# `require "hev2/replace"`, Socket.tcp and TCPSocket.new/open (and so
# Net::HTTP) connect through hev2.
#
#   ruby -I bindings/ruby/lib examples/ruby/net_http_replace.rb [URL]
#
# Without a URL it serves one page itself on 127.0.0.1 and fetches it.
require "net/http"
require "socket"
require "hev2/replace"

url = ARGV[0]
if url.nil?
  server = TCPServer.new("127.0.0.1", 0)
  Thread.new do
    client = server.accept
    nil until client.gets == "\r\n"
    client.write("HTTP/1.1 200 OK\r\nContent-Length: 22\r\nConnection: close\r\n\r\nhello through hev2 :)\n")
    client.close
  end
  url = "http://127.0.0.1:#{server.addr[1]}/"
end

before = Hev2.stats[:handles_created]
response = Net::HTTP.get_response(URI(url))
puts "#{response.code} #{response.message}: #{response.body.to_s.lines.first&.chomp}"
puts "connections made by hev2: #{Hev2.stats[:handles_created] - before}"

# frozen_string_literal: true

# `require "hev2/replace"` changes Socket and TCPSocket for the whole
# process, so these tests run in a process of their own (test/test_replace.rb
# starts it).
require_relative "../helper"
require "net/http"

require "hev2/replace"

class TestReplace < Minitest::Test
  include Helper

  def created
    Hev2.stats[:handles_created]
  end

  def test_socket_tcp_goes_through_hev2
    closing(Loopback.listener("::1")) do |srv|
      before = created
      Socket.tcp("::1", Loopback.port_of(srv), connect_timeout: 1) do |s|
        assert_instance_of Socket, s
      end
      assert_equal before + 1, created
    end
  end

  def test_tcpsocket_new_and_open_return_tcpsockets
    closing(Loopback.listener("127.0.0.1")) do |srv|
      before = created
      s = TCPSocket.new("127.0.0.1", Loopback.port_of(srv))
      assert_instance_of TCPSocket, s
      assert_equal Loopback.port_of(srv), s.peeraddr[1]
      s.close
      value = TCPSocket.open("127.0.0.1", Loopback.port_of(srv)) do |t|
        assert_instance_of TCPSocket, t
        :done
      end
      assert_equal :done, value
      assert_equal before + 2, created
    end
  end

  def test_tcpsocket_errors_are_the_usual_ones
    closing(Loopback.refusing("127.0.0.1")) do |r|
      assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", Loopback.port_of(r)) }
    end
  end

  def test_tcpserver_is_left_alone
    before = created
    server = TCPServer.new("127.0.0.1", 0)
    assert_instance_of TCPServer, server
    server.close
    assert_equal before, created
  end

  def test_net_http_benefits
    srv = TCPServer.new("127.0.0.1", 0)
    server = Thread.new do
      c = srv.accept
      nil until c.gets == "\r\n"
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
      c.close
    end
    before = created
    body = Net::HTTP.get(URI("http://127.0.0.1:#{srv.addr[1]}/"))
    assert_equal "hello", body
    assert_equal before + 1, created
    server.join
  ensure
    srv&.close
  end
end

# frozen_string_literal: true

# `require "hev2/replace"` changes Socket and TCPSocket for the whole
# process, so these tests run in a process of their own (test/test_replace.rb
# starts it).
require_relative "../helper"
require_relative "../testdns"
require "net/http"
require "openssl"

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

  # ---- Hev2::Replace.defaults and its https_rr setting --------------------

  def teardown
    Hev2::Replace.defaults = {}
  end

  def test_defaults_are_checked
    assert_raises(TypeError) { Hev2::Replace.defaults = [] }
    assert_raises(ArgumentError) { Hev2::Replace.defaults = { bogus: 1 } }
    assert_raises(TypeError) { Hev2::Replace.defaults = { https_rr: "yes" } }
    assert_raises(TypeError) { Hev2::Replace.defaults = { https_rr: 443 } }
    assert_raises(TypeError) { Hev2::Replace.defaults = { https_rr: ["443"] } }
    assert_raises(ArgumentError) { Hev2::Replace.defaults = { https_rr: [] } }
    assert_raises(ArgumentError) { Hev2::Replace.defaults = { https_rr: [0] } }
    assert_raises(TypeError) { Hev2::Replace.defaults = { https_rr: true, alpn: "h2" } }
    assert_raises(TypeError) { Hev2::Replace.defaults = { resolv_timeout: "1" } }
    assert_equal({}, Hev2::Replace.defaults)
    assert_empty Hev2::Replace.https_ports
  end

  # The setting reaches the connect call: https_rr: true for the ports it
  # names, unless the call chose for itself; the defaults under the call's own.
  def test_options_for
    assert_equal({ x: 1 }, Hev2::Replace.options_for({ x: 1 }, 443))
    Hev2::Replace.defaults = { https_rr: [443, 8443], nodelay: true }
    assert_equal [443, 8443], Hev2::Replace.https_ports
    assert_equal({ nodelay: true, https_rr: true }, Hev2::Replace.options_for({}, 443))
    assert_equal({ nodelay: true, https_rr: true }, Hev2::Replace.options_for({}, "8443"))
    assert_equal({ nodelay: true, https_rr: true }, Hev2::Replace.options_for({}, "https"))
    assert_equal({ nodelay: true }, Hev2::Replace.options_for({}, 80))
    assert_equal({ nodelay: false, https_rr: false }, Hev2::Replace.options_for({ nodelay: false, https_rr: false }, 443))
    assert_equal({ nodelay: true }, Hev2::Replace.options_for({}, "no such service"))
  end

  def certificate(name)
    key = OpenSSL::PKey::EC.generate("prime256v1")
    cert = OpenSSL::X509::Certificate.new
    cert.version = 2
    cert.serial = 1
    cert.subject = cert.issuer = OpenSSL::X509::Name.parse("/CN=#{name}")
    cert.public_key = key
    cert.not_before = Time.now - 60
    cert.not_after = Time.now + 3600
    ef = OpenSSL::X509::ExtensionFactory.new(cert, cert)
    cert.add_extension(ef.create_extension("basicConstraints", "CA:TRUE", true))
    cert.add_extension(ef.create_extension("subjectAltName", "DNS:#{name}"))
    cert.sign(key, OpenSSL::Digest.new("SHA256"))
    [cert, key]
  end

  # An HTTPS server on 127.0.0.1 with a certificate for svc.test alone,
  # keeping the server names its clients sent; yields its port and them.
  def https_server(cert, key)
    names = Queue.new
    ctx = OpenSSL::SSL::SSLContext.new
    ctx.cert = cert
    ctx.key = key
    ctx.servername_cb = ->((_sock, name)) { names << name; nil } # rubocop:disable Style/Semicolon
    tcp = TCPServer.new("127.0.0.1", 0)
    server = OpenSSL::SSL::SSLServer.new(tcp, ctx)
    server.start_immediately = false
    thread = Thread.new do
      loop do
        c = tcp.accept
        ssl = OpenSSL::SSL::SSLSocket.new(c, ctx)
        ssl.sync_close = true
        begin
          ssl.accept
          nil until ["\r\n", nil].include?(ssl.gets)
          ssl.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        rescue OpenSSL::SSL::SSLError, SystemCallError, IOError
          nil
        ensure
          ssl.close
        end
      end
    end
    yield tcp.addr[1], names
  ensure
    thread&.kill&.join
    tcp&.close
  end

  # https://svc.test/ through Net::HTTP: the HTTPS record sends it to
  # backend.test on the TLS server's port (nothing listens on 443), and
  # Net::HTTP's TLS still names svc.test and checks the certificate for it.
  def test_net_http_https_rr_keeps_the_origin_name
    cert, key = certificate("svc.test")
    https_server(cert, key) do |port, names|
      dns = TestDNSServer.new("127.0.0.1", 0)
      begin
        dns.zone("svc.test" => { "A" => ["127.0.0.1"],
                                 "HTTPS" => [{ "priority" => 1, "target" => "backend.test.", "port" => port,
                                               "alpn" => ["http/1.1"] }] },
                 "backend.test" => { "A" => ["127.0.0.1"] })
        Hev2::Replace.defaults = { https_rr: true, alpn: ["http/1.1"], resolver: :builtin, nameservers: [dns.address] }
        store = OpenSSL::X509::Store.new
        store.add_cert(cert)
        http = Net::HTTP.new("svc.test", 443, nil) # no proxy from the environment
        http.use_ssl = true
        http.cert_store = store
        http.verify_mode = OpenSSL::SSL::VERIFY_PEER
        body = http.start { http.get("/").body }
        assert_equal "hello", body
        assert_equal "svc.test", names.pop
        assert_equal [%w[svc.test HTTPS]], dns.query_log.select { |_, type| type == "HTTPS" }.uniq

        # A connect to another port asks nothing; one to 443 that says
        # https_rr: false neither.
        closing(Loopback.listener("127.0.0.1")) do |srv|
          TCPSocket.new("svc.test", Loopback.port_of(srv)).close
        end
        begin
          Socket.tcp("svc.test", 443, https_rr: false).close
        rescue Errno::ECONNREFUSED
          nil # nothing of this machine's listens on 443
        end
        assert_empty dns.query_log.select { |_, type| type == "HTTPS" }

        # The socket itself says where it went.
        sock = TCPSocket.new("svc.test", 443)
        assert_equal port, sock.peeraddr[1]
        assert_equal({ state: "answered", services: 1,
                       service: { priority: 1, target: "backend.test.", port: port, alpn: ["http/1.1"], ech: nil } },
                     Hev2.service_of(sock))
        sock.close
      ensure
        dns.close
      end
    end
  end
end

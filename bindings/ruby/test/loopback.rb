# frozen_string_literal: true

require "socket"

# Real loopback endpoints for the tests: a listener that accepts, an address
# that refuses (a bound socket that never listens), and a listener that
# silently drops SYNs (listen backlog 0 with its one queue slot taken by a
# filler connection that is never accepted), which stands for a blackholed
# address without needing a network namespace.
module Loopback
  module_function

  def family_of(ip)
    ip.include?(":") ? :INET6 : :INET
  end

  def bound_socket(ip)
    s = Socket.new(family_of(ip), :STREAM)
    s.setsockopt(:SOCKET, :REUSEADDR, true)
    s.bind(Addrinfo.tcp(ip, 0))
    s
  end

  # A listening socket; connections wait in its queue (nobody accepts).
  def listener(ip, backlog = 128)
    s = bound_socket(ip)
    s.listen(backlog)
    s
  end

  # Listeners on both loopback addresses sharing one port, so a name mapped
  # to both ::1 and 127.0.0.1 can reach either.
  def dual_listeners
    v6 = listener("::1")
    port = v6.local_address.ip_port
    v4 = Socket.new(:INET, :STREAM)
    v4.setsockopt(:SOCKET, :REUSEADDR, true)
    v4.bind(Addrinfo.tcp("127.0.0.1", port))
    v4.listen(128)
    [v6, v4, port]
  rescue Errno::EADDRINUSE
    v6&.close
    retry
  end

  # A port on ip where connect(2) is refused at once (RST): bound, not
  # listening, kept open so that no one else takes the port.
  def refusing(ip)
    bound_socket(ip)
  end

  # A listener whose accept queue is full: further SYNs are dropped, so a
  # connect to it hangs like one to a blackholed address. Returns
  # [listener, filler]; close both when done.
  def syn_dropping(ip)
    srv = bound_socket(ip)
    srv.listen(0)
    filler = Socket.new(family_of(ip), :STREAM)
    filler.connect(srv.local_address)
    [srv, filler]
  end

  def port_of(sock)
    sock.local_address.ip_port
  end

  def open_fds
    Dir.children("/proc/self/fd").size
  end
end

module Loopback
  module_function

  # A socket bound to ip:port (for a second family on the same port).
  def bound_socket_on(ip, port)
    s = Socket.new(family_of(ip), :STREAM)
    s.setsockopt(:SOCKET, :REUSEADDR, true)
    s.bind(Addrinfo.tcp(ip, port))
    s
  end
end

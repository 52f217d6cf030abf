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

  # A socket bound to ip:port (port 0: any free port), closed again if the
  # bind fails.
  def bound_socket(ip, port = 0)
    s = Socket.new(family_of(ip), :STREAM)
    s.setsockopt(:SOCKET, :REUSEADDR, true)
    s.bind(Addrinfo.tcp(ip, port))
    s
  rescue StandardError
    s&.close
    raise
  end

  # A listening socket; connections wait in its queue (nobody accepts).
  def listener(ip, backlog = 128, port = 0)
    s = bound_socket(ip, port)
    s.listen(backlog)
    s
  rescue StandardError
    s&.close
    raise
  end

  # Listeners on both loopback addresses sharing one port, so a name mapped
  # to both ::1 and 127.0.0.1 can reach either.
  def dual_listeners
    port, v6, v4 = one_port(->(p) { listener("::1", 128, p) }, ->(p) { listener("127.0.0.1", 128, p) })
    [v6, v4, port]
  end

  # A port on ip where connect(2) is refused at once (RST): bound, not
  # listening, kept open so that no one else takes the port.
  def refusing(ip, port = 0)
    bound_socket(ip, port)
  end

  # A listener whose accept queue is full: further SYNs are dropped, so a
  # connect to it hangs like one to a blackholed address. Returns
  # [listener, filler]; close both when done.
  def syn_dropping(ip, port = 0)
    srv = listener(ip, 0, port)
    filler = Socket.new(family_of(ip), :STREAM)
    filler.connect(srv.local_address)
    [srv, filler]
  rescue StandardError
    srv&.close
    filler&.close
    raise
  end

  # Endpoints on one port number, typically one per address family:
  #
  #   port, (srv6, filler), v4 = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
  #                                                 ->(p) { Loopback.listener("127.0.0.1", 16, p) })
  #
  # The first maker gets 0 (any free port), each other one the first's
  # port; each returns a socket or an Array of sockets. A port free on one
  # family may be held on another (another test's socket, a TIME_WAIT of
  # this machine's loopback traffic): a maker that fails with EADDRINUSE
  # closes everything made so far and all start again on a new port, so the
  # pair never depends on luck. Returns [port, what each maker returned...].
  def one_port(first, *others, tries: 100)
    tries.times do
      made = []
      begin
        made << first.call(0)
        port = port_of([made.first].flatten.first) # (not Array(): an IO's to_a reads it)
        others.each { |m| made << m.call(port) }
        return [port, *made]
      rescue Errno::EADDRINUSE
        made.flatten.each(&:close)
      end
    end
    raise "no port free on every family in #{tries} tries"
  end

  # ip:port bound on purpose (the test's own namespace, bench/dual_name.rb):
  # a port made for another family is taken with one_port.
  def bound_socket_on(ip, port)
    bound_socket(ip, port)
  end

  def port_of(sock)
    sock.local_address.ip_port
  end

  def open_fds
    Dir.children("/proc/self/fd").size
  end
end


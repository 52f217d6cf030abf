# frozen_string_literal: true

# Run by bench.rb inside a test namespace: "dual.hev2.test" is ::1 and
# 127.0.0.1 in the namespace's hosts file, and ::1 drops SYNs on the port.
# Hev2.tcp and Socket.tcp both resolve the name with getaddrinfo from that
# file (nothing leaves the namespace). Socket.tcp before Ruby 3.4 tries ::1
# first and waits; it is given connect_timeout: 1 so that it ever finishes.
require "socket"
require "hev2"
require_relative "measure"
require_relative "../test/loopback"

NAME = "dual.hev2.test" # in the namespace's hosts file (bench.rb writes it)
abort "dual_name.rb must run in its namespace" unless File.read("/etc/hosts").include?(NAME)

srv6, filler = Loopback.syn_dropping("::1")
port = Loopback.port_of(srv6)
v4 = Loopback.bound_socket_on("127.0.0.1", port)
v4.listen(1024)
acceptor = Thread.new { loop { v4.accept.first.close } }

timeout = 1
results = Measure.compare(
  rounds: 3, per_round: 2,
  "Hev2.tcp(name)": -> { Hev2.tcp(NAME, port, &:close) },
  "Socket.tcp(name, connect_timeout: #{timeout})": lambda {
    Socket.tcp(NAME, port, connect_timeout: timeout, &:close)
  },
)
Measure.report("name with ::1 (SYNs dropped) and 127.0.0.1, from the namespace's hosts file " \
               "(median of 3 rounds x 2; objects include the acceptor thread's)",
               results, base: :"Hev2.tcp(name)", other: :"Socket.tcp(name, connect_timeout: #{timeout})")
acceptor.kill
[srv6, filler, v4].each(&:close)

# The healthy case: both addresses accept on one port (the same name from
# the same hosts file). Ruby 3.4's TCPSocket.new resolves both families on
# threads of its own and races them; hev2 answers hosts-file names without a
# getaddrinfo thread (the system resolver reads the file itself when
# nsswitch.conf puts files first). The acceptors are processes of their
# own, as the literal case's server is: acceptor threads in this process
# would take the GVL from the connects being measured (on Ruby 3.1 they
# doubled what a connect to the name cost either way).
both6 = TCPServer.new("::1", 0)
both_port = both6.addr[1]
both4 = TCPServer.new("127.0.0.1", both_port)
acceptors = [both6, both4].map { |srv| Process.fork { loop { srv.accept.close } } }
begin
  healthy = Measure.compare(
    rounds: 7, per_round: 100,
    "Hev2.tcp(name)": -> { Hev2.tcp(NAME, both_port, &:close) },
    "TCPSocket.new(name)": -> { TCPSocket.new(NAME, both_port).close },
  )
  Measure.report("name with ::1 and 127.0.0.1 both accepting, from the namespace's hosts file " \
                 "(median of 7 rounds x 100; acceptors in processes of their own)",
                 healthy, base: :"Hev2.tcp(name)", other: :"TCPSocket.new(name)")
ensure
  acceptors.each do |pid|
    Process.kill(:KILL, pid)
    Process.wait(pid)
  end
  [both6, both4].each(&:close)
end

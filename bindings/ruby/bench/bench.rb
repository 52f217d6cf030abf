# frozen_string_literal: true

# make bench-ruby: Hev2.tcp beside TCPSocket.new and Socket.tcp in the same
# Ruby process.
#  1. loopback, IP literal (time per connection, objects allocated per call):
#     Hev2.tcp on the caller's thread (the C extension Hev2::NoGVL, when
#     built) and on the eventfd path (the race on a library thread, as
#     without the extension or under a Fiber scheduler);
#  2. a name with both families whose IPv6 address drops SYNs, resolved by
#     both from the same hosts file inside a test namespace (root only; see
#     bench/dual_name.rb).
require "rbconfig"
require "socket"
require "hev2"
require_relative "measure"
require_relative "rows"
require_relative "../test/netns"

puts "ruby #{RUBY_VERSION} (#{RbConfig.ruby}), libhev2 #{Hev2.library[:version]}, " \
     "C extension #{Hev2::NoGVL.available? ? "loaded" : "NOT loaded (Hev2.tcp on the eventfd path)"}"
tw = `ss -s 2>/dev/null`[/timewait (\d+)/, 1]
puts "TIME_WAIT sockets before: #{tw || "?"}"
Hev2.init

server = Measure::Server.new(1024)
port = server.port

# The library alone: hev2_connect + hev2_wait in C (GVL released, not
# interruptible) + hev2_result, to tell the engine's time from the gem's.
scratch = Hev2::Scratch.new
f = Hev2::Native::F
library_alone = lambda do |options = 0|
  f[:hev2_connect_len].call(Fiddle::Pointer["127.0.0.1"].to_i, 9, scratch.port_string(port), options, scratch.address)
  conn = scratch.u64(Hev2::Scratch::OUT)
  f[:hev2_wait].call(conn, -1)
  f[:hev2_result].call(conn, scratch.address + Hev2::Scratch::RESULT)
  fd = scratch.i32(Hev2::Scratch::RESULT + Hev2::Layout::RESULT[:fd])
  f[:hev2_release].call(conn)
  IO.for_fd(fd).close
end

begin
  drive = Hev2::Connector.drive
  eventfd_path = lambda do
    Hev2::Connector.drive = :library
    Hev2.tcp("127.0.0.1", port, &:close)
  ensure
    Hev2::Connector.drive = drive
  end
  rows = {
    "Hev2.tcp(\"127.0.0.1\")": -> { Hev2.tcp("127.0.0.1", port, &:close) },
    "TCPSocket.new(\"127.0.0.1\")": -> { TCPSocket.new("127.0.0.1", port).close },
    "Socket.tcp(\"127.0.0.1\")": -> { Socket.tcp("127.0.0.1", port, &:close) },
  }
  rows[:"(Hev2.tcp, eventfd path)"] = eventfd_path if drive == :waiter
  rows[:"(libhev2 alone, waiting in C)"] = library_alone
  # The same with the race on the waiting thread (HEV2_DRIVE_WAITER): the
  # floor of Hev2.tcp's waiter-driven path.
  rows[:"(libhev2 alone, waiter-driven)"] = -> { library_alone.call(Hev2::Connector::WAITER_OPTIONS) }
  results = Measure.compare(rounds: 7, per_round: 300, **rows)
  Measure.report("loopback, IP literal (median of 7 rounds x 300)", results,
                 base: :"Hev2.tcp(\"127.0.0.1\")", other: :"TCPSocket.new(\"127.0.0.1\")")
  [:"Socket.tcp(\"127.0.0.1\")", :"(Hev2.tcp, eventfd path)", :"(libhev2 alone, waiter-driven)"].each do |other|
    next unless results.key?(other)

    printf("  ratio Hev2.tcp / %s: time %.2fx (rounds %.2f..%.2f)\n", other,
           *Measure.ratio(results, :"Hev2.tcp(\"127.0.0.1\")", other))
  end
  { "TCPSocket.new" => :"TCPSocket.new(\"127.0.0.1\")", "Socket.tcp" => :"Socket.tcp(\"127.0.0.1\")" }.each do |peer, label|
    Rows.row("ruby #{RUBY_VERSION} Hev2.tcp / #{peer}, 127.0.0.1", Measure.ratios(results, :"Hev2.tcp(\"127.0.0.1\")", label),
             "x", goal: 1.1)
  end

  # Four threads connecting at once (the GVL shared): throughput of each,
  # interleaved rounds, the ratio TCPSocket.new's time / Hev2.tcp's time
  # per round (above 1: Hev2.tcp moves more connections per second).
  threads = 4
  per_thread = 100
  in_threads = lambda do |blk|
    t = Measure.now
    Array.new(threads) { Thread.new { per_thread.times { blk.call } } }.each(&:join)
    (Measure.now - t) / (threads * per_thread)
  end
  hev2_tcp = -> { Hev2.tcp("127.0.0.1", port, &:close) }
  tcpsocket = -> { TCPSocket.new("127.0.0.1", port).close }
  2.times { in_threads.call(hev2_tcp) && in_threads.call(tcpsocket) }
  ratios = Array.new(9) do |round|
    a, b = round.even? ? [in_threads.call(hev2_tcp), in_threads.call(tcpsocket)] : [in_threads.call(tcpsocket), in_threads.call(hev2_tcp)].reverse
    [b / a, a, b]
  end.sort_by(&:first)
  med = ratios[ratios.size / 2]
  printf("loopback, IP literal, %d threads at once (9 interleaved rounds x %d connects each)\n", threads, per_thread)
  printf("  Hev2.tcp %.1f us/connection, TCPSocket.new %.1f us/connection (median round)\n", med[1] * 1e6, med[2] * 1e6)
  printf("  throughput Hev2.tcp / TCPSocket.new: %.2fx (per-round median; rounds %.2f..%.2f)\n",
         med[0], ratios.first[0], ratios.last[0])
ensure
  server.stop
end

if TestNetns.usable?
  ns = TestNetns.new(extra_hosts: "::1 dual.hev2.test\n127.0.0.1 dual.hev2.test\n")
  begin
    system(*ns.command(RbConfig.ruby, *$LOAD_PATH.grep(/hev2|bindings/).map { |d| "-I#{d}" },
                       File.join(__dir__, "dual_name.rb"))) or abort "dual_name.rb failed"
  ensure
    ns.close
  end
else
  puts "SKIP: the dual-family name case needs root (a network namespace for its hosts file)"
end

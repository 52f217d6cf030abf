# frozen_string_literal: true

# Hev2.tcp beside Socket.tcp under the same Fiber scheduler (make
# bench-ruby-fibers, on each Ruby of RUBIES): the tests' TinyScheduler
# (test/fiber_scheduler.rb: io_wait through IO.select), both run by one
# non-blocking fiber, interleaved (Measure.compare: rounds of 200 connects
# to 127.0.0.1, the order alternating); the row is the median of the
# per-round time ratios (goal: at most 1.1x). Also printed: how many times
# per connect each one waited through the scheduler (io_wait), which shows
# that the scheduler was really in the path.
require "rbconfig"
require "socket"
require "hev2"
require_relative "measure"
require_relative "rows"
require_relative "../test/fiber_scheduler"

ROUNDS = Integer(ENV.fetch("BENCH_ROUNDS", "15"))
PER_ROUND = Integer(ENV.fetch("BENCH_PER_ROUND", "200"))

server = Measure::Server.new(4096)
port = server.port

begin
  scheduler = TinyScheduler.new
  waits = Hash.new(0)
  counted = lambda do |label, &blk|
    lambda do
      before = scheduler.io_waits.size
      blk.call
      waits[label] += scheduler.io_waits.size - before
    end
  end
  results = nil
  Thread.new do
    Fiber.set_scheduler(scheduler)
    Fiber.schedule do
      results = Measure.compare(
        rounds: ROUNDS, per_round: PER_ROUND,
        "Hev2.tcp": counted.call(:"Hev2.tcp") { Hev2.tcp("127.0.0.1", port, &:close) },
        "Socket.tcp": counted.call(:"Socket.tcp") { Socket.tcp("127.0.0.1", port, &:close) }
      )
    end
  end.join
  calls = ROUNDS * PER_ROUND + 3 # Measure.compare's warm-up calls each block 3 times
  puts "ruby #{RUBY_VERSION}: under a Fiber scheduler (TinyScheduler), 127.0.0.1, #{ROUNDS} rounds x #{PER_ROUND}"
  results.each do |label, (t, _)|
    printf("  %-12s %8.1f us/connection, %.2f io_wait per connection\n", label, t * 1e6, waits[label].fdiv(calls))
  end
  Rows.row("ruby #{RUBY_VERSION} Fiber scheduler: Hev2.tcp / Socket.tcp, 127.0.0.1",
           Measure.ratios(results, :"Hev2.tcp", :"Socket.tcp"), "x", goal: 1.1)
ensure
  server.stop
end

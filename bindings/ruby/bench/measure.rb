# frozen_string_literal: true

require "rbconfig"

# Timing and allocation helpers shared by the bench scripts.
module Measure
  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Runs each labelled block `rounds` times `per_round` calls, interleaving
  # the labels (their order rotated each round) so that machine noise hits
  # all alike. Returns { label => [median seconds per call, objects
  # allocated per call, seconds per call of each round] }.
  def compare(rounds:, per_round:, **blocks)
    times = Hash.new { |h, k| h[k] = [] }
    allocs = Hash.new(0)
    blocks.each_value { |b| 3.times { b.call } } # warm up
    order = blocks.to_a
    rounds.times do |round|
      order.rotate(round).each do |label, b|
        GC.start
        a = GC.stat(:total_allocated_objects)
        t = now
        per_round.times { b.call }
        times[label] << (now - t) / per_round
        allocs[label] += GC.stat(:total_allocated_objects) - a
      end
    end
    blocks.keys.to_h do |label|
      sorted = times[label].sort
      [label, [sorted[sorted.size / 2], allocs[label].fdiv(rounds * per_round), times[label]]]
    end
  end

  def report(title, results, base:, other:)
    _, b_a = results.fetch(base)
    _, o_a = results.fetch(other)
    puts title
    results.each do |label, (t, a)|
      printf("  %-34s %9.1f us/connection %7.1f objects/call\n", label, t * 1e6, a)
    end
    med, lo, hi = ratio(results, base, other)
    printf("  ratio %s / %s: time %.2fx (per-round median; rounds %.2f..%.2f), objects %.2fx\n",
           base, other, med, lo, hi, b_a / o_a)
  end

  # The median of the per-round time ratios base/other, and their range.
  def ratio(results, base, other)
    r = ratios(results, base, other).sort
    [r[r.size / 2], r.first, r.last]
  end

  # The per-round time ratios base/other.
  def ratios(results, base, other)
    results.fetch(base)[2].zip(results.fetch(other)[2]).map { |b, o| b / o }
  end

  # A loopback server that accepts and closes, run in another Ruby process
  # so that it neither competes for the bench's GVL nor counts in its
  # allocations: #port to connect to, #stop when done.
  class Server
    attr_reader :port

    def initialize(backlog)
      r, w = IO.pipe
      @pid = Process.spawn(RbConfig.ruby, "-rsocket", "-e", <<~RUBY, out: w)
        s = TCPServer.new("127.0.0.1", 0)
        s.listen(#{Integer(backlog)})
        $stdout.puts s.addr[1]
        $stdout.flush
        loop { s.accept.close }
      RUBY
      w.close
      @port = Integer(r.gets)
      r.close
    end

    def stop
      Process.kill(:TERM, @pid)
      Process.wait(@pid)
    end
  end
end

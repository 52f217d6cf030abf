# frozen_string_literal: true

require "io/wait"

# The smallest Fiber scheduler that can run the tests: io_wait through
# IO.select, sleeps through a timer list. It records the IOs it was asked to
# wait for, so a test can see that Hev2.tcp waited through it.
class TinyScheduler
  attr_reader :io_waits

  def initialize
    @readable = {}
    @writable = {}
    @timers = [] # [deadline, fiber]
    @ready = []
    @io_waits = []
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def fiber(&block)
    f = Fiber.new(blocking: false, &block)
    f.resume
    f
  end

  def io_wait(io, events, timeout)
    @io_waits << io.fileno
    f = Fiber.current
    @readable[io] = f if events.anybits?(IO::READABLE)
    @writable[io] = f if events.anybits?(IO::WRITABLE)
    @timers << [now + timeout, f] if timeout
    Fiber.yield
    @timers.reject! { |_, tf| tf.equal?(f) }
    ready = 0
    ready |= IO::READABLE if @readable.delete(io).nil? && events.anybits?(IO::READABLE)
    ready |= IO::WRITABLE if @writable.delete(io).nil? && events.anybits?(IO::WRITABLE)
    ready.zero? ? false : ready
  end

  def kernel_sleep(duration = nil)
    @timers << [now + duration, Fiber.current] if duration
    Fiber.yield
    true
  end

  def block(_blocker, timeout = nil)
    @timers << [now + timeout, Fiber.current] if timeout
    Fiber.yield
  end

  def unblock(_blocker, fiber)
    @ready << fiber
  end

  def close
    run
  end

  def run
    until @readable.empty? && @writable.empty? && @timers.empty? && @ready.empty?
      @ready.shift.resume until @ready.empty?
      next_timer = @timers.map(&:first).min
      wait = next_timer ? [next_timer - now, 0].max : nil
      r, w = IO.select(@readable.keys, @writable.keys, nil, wait)
      (r || []).each { |io| @readable.delete(io)&.resume }
      (w || []).each { |io| @writable.delete(io)&.resume }
      due, @timers = @timers.partition { |deadline, _| deadline <= now }
      due.each { |_, f| f.resume if f.alive? }
    end
  end
end

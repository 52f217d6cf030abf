# frozen_string_literal: true

require "fiddle"
require_relative "layout"

module Hev2
  # A reusable buffer that the C calls of one connection write into and that
  # Ruby reads with String#unpack1(offset:): no Ruby object is allocated to
  # pass or read a field.
  #
  # It is a binary String of 4 KiB: too large to be embedded in a GC slot, so
  # its bytes live in a malloc'd block that never moves (compaction moves
  # slots, not that block) and Ruby never reallocates it (its length never
  # changes). Its address is taken once. Buffers are pooled; one is lent to
  # a single call at a time (a call may span a Fiber switch). Each struct
  # has its own region (test_layout.rb checks that none overlaps the next).
  class Scratch
    BYTES = 4096
    OUT = 0        # hev2_conn out-parameter (8 bytes)
    PORT = 16      # the port as a NUL-terminated decimal string
    PORT_MAX = 40  # its longest, in digits (the library refuses far shorter)
    RESULT = 64    # hev2_result_info, then the other structs, each at the
    # next 64-byte boundary after the one before (their sizes are the
    # header's: appended fields move what follows, never overlap it)
    after = ->(offset, size) { (offset + size + 63) & ~63 }
    OPTIONS = after.(RESULT, Layout::RESULT_SIZE)   # hev2_options
    ATTEMPT = after.(OPTIONS, Layout::OPTIONS_SIZE) # hev2_attempt_info
    EVENT = after.(ATTEMPT, Layout::ATTEMPT_SIZE)   # hev2_event_info
    STATS = after.(EVENT, Layout::EVENT_SIZE)       # hev2_stats_info
    REPORT = after.(STATS, Layout::STATS_SIZE)                        # hev2_report_info
    REPORT_LOOKUP = after.(REPORT, Layout::REPORT_SIZE)               # hev2_report_lookup_info
    REPORT_ATTEMPT = after.(REPORT_LOOKUP, Layout::REPORT_LOOKUP_SIZE) # hev2_report_attempt_info
    SERVICE = after.(REPORT_ATTEMPT, Layout::REPORT_ATTEMPT_SIZE)      # hev2_service_info
    # The rest: hev2_service's buffer for an ECH configuration (a longer
    # one is read again into a buffer of its size).
    ECH = after.(SERVICE, Layout::SERVICE_SIZE)
    ECH_SIZE = BYTES - ECH
    if ECH_SIZE < 256
      raise "hev2: Scratch::BYTES is too small for the structs"
    end
    POOL_MAX = 64

    @pool = []

    class << self
      def acquire
        @pool.pop || new
      end

      def release(scratch)
        @pool.push(scratch) if @pool.size < POOL_MAX
      end
    end

    attr_reader :bytes, :address

    def initialize
      @bytes = "\0".b * BYTES
      @address = Fiddle::Pointer[@bytes].to_i
      @port_written = nil
      put_u64(RESULT + Layout::RESULT[:size], Layout::RESULT_SIZE)
      put_u64(ATTEMPT + Layout::ATTEMPT[:size], Layout::ATTEMPT_SIZE)
      put_u64(EVENT + Layout::EVENT[:size], Layout::EVENT_SIZE)
      put_u64(STATS + Layout::STATS[:size], Layout::STATS_SIZE)
      put_u64(REPORT + Layout::REPORT[:size], Layout::REPORT_SIZE)
      put_u64(REPORT_LOOKUP + Layout::REPORT_LOOKUP[:size], Layout::REPORT_LOOKUP_SIZE)
      put_u64(REPORT_ATTEMPT + Layout::REPORT_ATTEMPT[:size], Layout::REPORT_ATTEMPT_SIZE)
      put_u64(SERVICE + Layout::SERVICE[:size], Layout::SERVICE_SIZE)
    end

    def i32(offset)
      @bytes.unpack1("l", offset: offset)
    end

    def u64(offset)
      @bytes.unpack1("Q", offset: offset)
    end

    def f64(offset)
      @bytes.unpack1("d", offset: offset)
    end

    def c_string(offset, max)
      @bytes.unpack1("Z#{max}", offset: offset).force_encoding(Encoding::UTF_8)
    end

    def put_i32(offset, value)
      value &= 0xffff_ffff
      4.times do |i|
        @bytes.setbyte(offset + i, value & 0xff)
        value >>= 8
      end
    end

    def put_u64(offset, value)
      8.times do |i|
        @bytes.setbyte(offset + i, value & 0xff)
        value >>= 8
      end
    end

    # Writes port (an Integer) as a NUL-terminated decimal string at PORT and
    # returns its address. Any Integer: whether it is a port is the
    # library's rule (one beyond PORT_MAX digits is cut, and still refused).
    def port_string(port)
      # The same port as last time (a client connects to a few ports
      # again and again): the string is there already. Only this method
      # writes at PORT.
      return @address + PORT if port.equal?(@port_written)

      @port_written = port.between?(0, 99_999) ? port : nil
      unless port.between?(0, 99_999)
        digits = port.to_s.byteslice(0, PORT_MAX)
        digits.bytesize.times { |i| @bytes.setbyte(PORT + i, digits.getbyte(i)) }
        @bytes.setbyte(PORT + digits.bytesize, 0)
        return @address + PORT
      end
      digits = port < 10 ? 1 : port < 100 ? 2 : port < 1000 ? 3 : port < 10_000 ? 4 : 5
      i = digits
      @bytes.setbyte(PORT + i, 0)
      loop do
        i -= 1
        @bytes.setbyte(PORT + i, 48 + port % 10)
        port /= 10
        break if i.zero?
      end
      @address + PORT
    end

    # Copies the bytes of a (frozen template) String to offset.
    def copy(offset, template)
      template.bytesize.times { |i| @bytes.setbyte(offset + i, template.getbyte(i)) }
    end
  end
end

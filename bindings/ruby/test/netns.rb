# frozen_string_literal: true

require "fileutils"

# A network namespace of the gem's tests: only a loopback interface, and
# its own copy of every file glibc's resolver reads: resolv.conf (a DNS
# server the test runs on 127.0.0.1:53), hosts, nsswitch.conf (a desktop's
# "hosts: files mdns4_minimal [NOTFOUND=return] dns" would put nss-mdns,
# its answers and its errnos, in front of DNS), gai.conf (a local
# preference would reorder addresses) and host.conf. Names resolved in it
# never reach this machine's resolver, and are answered the same on any
# host.
class TestNetns
  attr_reader :name

  # hosts from the hosts file, then DNS, nothing else; the other databases
  # from their files.
  NSSWITCH = <<~NSS
    passwd: files
    group: files
    shadow: files
    hosts: files dns
    networks: files
    protocols: files
    services: files
    ethers: files
    rpc: files
  NSS

  def self.usable?
    Process.uid.zero? && system("ip", "netns", "list", out: File::NULL, err: File::NULL)
  end

  # extra_hosts: lines appended to the namespace's hosts file.
  def initialize(extra_hosts: "")
    @name = "hev2rb-#{Process.pid}"
    @etc = "/etc/netns/#{@name}"
    system("ip", "netns", "delete", @name, err: File::NULL) # a leftover of a killed run
    run("ip", "netns", "add", @name)
    run("ip", "-n", @name, "link", "set", "lo", "up")
    FileUtils.mkdir_p(@etc)
    File.write("#{@etc}/resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    File.write("#{@etc}/hosts", "127.0.0.1 localhost\n::1 localhost\n#{extra_hosts}")
    File.write("#{@etc}/nsswitch.conf", NSSWITCH)
    # ip netns exec bind-mounts each file over /etc's, which must exist:
    # where this host has none, glibc's defaults are these files' anyway.
    { "gai.conf" => "", "host.conf" => "multi on\n" }.each do |file, text|
      File.write("#{@etc}/#{file}", text) if File.exist?("/etc/#{file}")
    end
  end

  # argv run inside the namespace (ip netns exec bind-mounts the files).
  def command(*argv)
    ["ip", "netns", "exec", @name, *argv]
  end

  def close
    system("ip", "netns", "delete", @name)
    FileUtils.rm_rf(@etc)
  end

  private

  def run(*argv)
    system(*argv) or raise "#{argv.join(" ")} failed"
  end
end

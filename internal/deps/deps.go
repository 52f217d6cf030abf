// Package deps pins modules that several parts use before their first import lands.
package deps
import (
 _ "golang.org/x/sys/unix"
 _ "github.com/mattn/go-pointer"
 _ "github.com/miekg/dns"
 _ "github.com/vishvananda/netlink"
)

module github.com/hev2/hev2

go 1.26.0

require (
	github.com/mdlayher/netlink v1.11.2
	github.com/miekg/dns v1.1.73
	github.com/vishvananda/netns v0.0.5
	golang.org/x/net v0.57.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mdlayher/socket v0.6.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
)

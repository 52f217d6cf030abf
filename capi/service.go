package main

/*
#include "internal.h"
*/
import "C"

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/race"
)

// httpsStates are the C header's HEV2_HTTPS_* for the race's states.
var httpsStates = [...]C.int{
	race.HTTPSPending:    C.HEV2_HTTPS_PENDING,
	race.HTTPSAnswered:   C.HEV2_HTTPS_ANSWERED,
	race.HTTPSNoData:     C.HEV2_HTTPS_NODATA,
	race.HTTPSNXDomain:   C.HEV2_HTTPS_NXDOMAIN,
	race.HTTPSFailed:     C.HEV2_HTTPS_FAILED,
	race.HTTPSTimeout:    C.HEV2_HTTPS_TIMEOUT,
	race.HTTPSMalformed:  C.HEV2_HTTPS_MALFORMED,
	race.HTTPSAliasLimit: C.HEV2_HTTPS_ALIAS_LIMIT,
}

//export hev2go_service
func hev2go_service(id C.hev2_conn, s *C.hev2_service_info) (rc C.int) {
	defer guard(&rc)
	c, rc := doneHeld(id)
	if c == nil {
		return rc
	}
	defer c.leave()
	var out *race.HTTPSOutcome
	if c.res != nil {
		out = c.res.HTTPS
	} else {
		var ce *core.Error
		if errors.As(c.err, &ce) {
			out = ce.HTTPS
		}
	}
	s.state = C.HEV2_HTTPS_NONE
	if out == nil {
		return C.HEV2_OK
	}
	if int(out.State) < len(httpsStates) {
		s.state = httpsStates[out.State]
	}
	s.n_services = C.int(len(out.Services))
	svc := out.WinnerService()
	if svc == nil || c.res == nil {
		return C.HEV2_OK
	}
	s.has_service = 1
	s.priority = C.int(svc.Priority)
	s.port = C.int(svc.Port)
	putString(s.target[:], svc.Target)
	putString(s.alpn[:], strings.Join(svc.ALPN, ","))
	s.ech_len = C.size_t(len(svc.ECH))
	if len(svc.ECH) > 0 && len(svc.ECH) <= int(s.ech_size) {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(s.ech)), len(svc.ECH)), svc.ECH)
	}
	return C.HEV2_OK
}

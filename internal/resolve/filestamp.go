package resolve

import "golang.org/x/sys/unix"

// fileStamp tells whether a file is still the one that was read: a
// replaced file (a new inode, as editors and `mv` make) or one rewritten in
// place (its size, modification or change time) gets a new stamp.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

// stampOf is one stat(2) of path.
func stampOf(path string) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileStamp{}, err
	}
	return fileStamp{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}, nil
}

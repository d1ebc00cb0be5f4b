//go:build !unix

package scenarios

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }

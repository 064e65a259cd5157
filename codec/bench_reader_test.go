package codec

import "bytes"

func bytesReader(p []byte) *bytes.Reader { return bytes.NewReader(p) }

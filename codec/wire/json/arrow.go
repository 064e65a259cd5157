package json

import "github.com/apache/arrow-go/v18/arrow"

func arrowTimestamp(ns int64) arrow.Timestamp { return arrow.Timestamp(ns) }

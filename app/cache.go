package app

import (
	"fmt"

	"cnntime/db"
)

func MergedText(m db.Merged) string {
	return fmt.Sprintf("%d added, %d replaced older ones, %d left out (the cache's were as new)", m.Added, m.Replaced, m.Kept)
}

package txonly_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/sessiondb/sessiondb/lint/txonly"
)

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), txonly.Analyzer, "a", "app/db", "app/pg", "withtests")
}

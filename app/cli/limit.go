package cli

import (
	"fmt"

	"cnntime/app"
	"cnntime/predictor"
)

// rankByLimit is best's --deadline or --budget: it ranks the rows (one per curve, in
// the curves' order) and their node notes by app's ranking, the one the window's
// Deadline and Budget use, and marks each row with whether it meets the limit.
func rankByLimit(limit app.RunLimit, curves []predictor.Curve, rows []BestRow, notes []string) (app.LimitRanking, []BestRow, []string) {
	r := limit.Rank(curves)
	for i := range rows {
		rows[i].Meets = &r.Meets[i]
	}
	return r, app.Permute(rows, r.Order), app.Permute(notes, r.Order)
}

// writeAnswer prints the answer to the limit's question under best's table
// (app.RunLimit.Answer, as the window's Results tab says it); nothing without a limit.
func writeAnswer(env *Env, limit app.RunLimit, curves []predictor.Curve, r app.LimitRanking) {
	if line := limit.Answer(curves, r); line != "" {
		fmt.Fprintln(env.Stdout, line)
	}
}

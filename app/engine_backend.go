package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"cnntime/app/prices"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
)

// ModelChoice is a CNN the user can pick: a zoo model or one of their own.
type ModelChoice struct {
	Name   string
	Family string // "ResNet", "VGG", ...; "Custom" for the user's own
	Custom bool
}

// SessionBackend is where a Session gets its choices and predictions: the app's
// engine in the GUI, a fake in tests. Its methods may be called from any goroutine.
type SessionBackend interface {
	ModelChoices() []ModelChoice
	MachineChoices(ctx context.Context) ([]hw.Machine, error)
	// PredictCurves returns one curve per model × machine of the settings.
	PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error)
	// AddCustomModel reads a custom model file's contents and returns its name.
	AddCustomModel(data []byte) (string, error)
}

// EngineBackend is the SessionBackend of the desktop app: the prediction engine over
// the measurement cache. The custom models the user adds are registered with the
// engine, so they are predicted from the cache's measurements like zoo models, and
// saved in the cache, so they come back at the next start.
type EngineBackend struct {
	cache  *db.DB
	mu     sync.Mutex
	engine *Engine
	added  []*cnn.Network // custom models added since start, registered again when the engine is rebuilt
	// stop ends the cache watches (Watch) when the backend closes.
	stop    context.CancelFunc
	stopped context.Context
}

// OpenEngineBackend opens the cache at dbPath (created when missing) and loads the
// engine. With dbPath "" it works without a cache: the embedded catalog and
// calibration only, nothing measured, nothing to import into.
func OpenEngineBackend(ctx context.Context, dbPath string) (*EngineBackend, error) {
	var d *db.DB
	if dbPath != "" {
		var err error
		if d, err = OpenCache(dbPath); err != nil {
			return nil, err
		}
	}
	e, err := NewEngine(ctx, d)
	if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, err
	}
	stopped, stop := context.WithCancel(context.Background())
	return &EngineBackend{cache: d, engine: e, stopped: stopped, stop: stop}, nil
}

// Watch follows the cache (WatchCache, every DefaultCacheWatch) while ctx lasts and the
// backend is open: after another program wrote to it, the engine is loaded again and
// then changed is called, on the watching goroutine; reloadErr gets a reload that failed.
// A change while busy() (this window's own sweep, which reloads when it ends) is let
// pass. When the cache file is deleted, or another file is put at its path (a backup
// restored, a cache created again), notice says so in a sentence; the backend then
// reads the new file (db.DB.Reopen). Without a cache there is nothing to watch.
func (b *EngineBackend) Watch(ctx context.Context, busy func() bool, changed func(), reloadErr func(error), notice func(string)) {
	if b.cache == nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(b.stopped, cancel)
	path := b.cache.Path()
	from := StampCache(path) // now, not when the goroutine first runs: a write in between counts
	go func() {
		defer stop()
		defer cancel()
		gone := false // the file is gone, and notice said so
		watchFrom(ctx, path, DefaultCacheWatch, from, func() {
			if b.cache.Changed() != nil {
				if msg, ok := b.followFile(ctx, &gone); ok && ctx.Err() == nil {
					notice(msg)
				}
				if gone {
					return
				}
			} else if busy() {
				return
			}
			if err := b.Reload(ctx); err != nil {
				if ctx.Err() == nil {
					reloadErr(err)
				}
				return
			}
			if ctx.Err() == nil {
				changed()
			}
		})
	}()
}

// followFile reopens the cache after its file changed under it (deleted, replaced,
// created again), and says what happened in a sentence (ok false: nothing new to
// say). gone records that the file is missing, so the delete is said once.
func (b *EngineBackend) followFile(ctx context.Context, gone *bool) (string, bool) {
	path := b.cache.Path()
	err := b.cache.Changed()
	reopened, rerr := b.cache.Reopen(ctx)
	var changed *db.CacheChangedError
	errors.As(err, &changed)
	saved := ""
	if changed != nil && changed.Rescued != "" {
		saved = " What this window had written to it is saved in " + changed.Rescued + "."
	}
	switch {
	case rerr != nil:
		*gone = false
		return fmt.Sprintf("The cache file %s was replaced by a file the window cannot read: %v. The window goes on with what it read before; nothing it does now is saved.", path, rerr), true
	case reopened:
		was := "created again"
		if !*gone {
			was = "replaced by another file"
		}
		*gone = false
		return fmt.Sprintf("The cache file %s was %s: the window now reads the new file.%s", path, was, saved), true
	case *gone:
		return "", false
	}
	*gone = true
	return fmt.Sprintf("The cache file %s was deleted (or moved away): the window goes on with what it read, but saves nothing until a cache is there again; it reads one created there as soon as it appears.%s", path, saved), true
}

// DB is the open measurement cache, nil when working without one.
func (b *EngineBackend) DB() *db.DB { return b.cache }

// Import merges another machine's cache file or a CSV of measured step times into the
// cache, reloads the engine, and says what it added.
func (b *EngineBackend) Import(ctx context.Context, path string) (string, error) {
	if b.cache == nil {
		return "", errNoCache("import")
	}
	rep, err := b.cache.Import(ctx, path)
	if err != nil {
		return "", err
	}
	if err := b.Reload(ctx); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Imported %s (%s): %d devices; measurements: %s; step times: %s; %d custom models.",
		rep.File, rep.Kind, rep.Devices, MergedText(rep.Measurements), MergedText(rep.Steps), rep.CustomModels)
	if p := rep.Prices; p.Added+p.Replaced > 0 || len(rep.PricesRefused) > 0 {
		msg += " Cloud prices: " + PricesMergedText(rep) + "."
	}
	if len(rep.CustomModelClashes) > 0 {
		msg += fmt.Sprintf(" Not imported, as yours of the same name differ: %s.", strings.Join(rep.CustomModelClashes, ", "))
	}
	return msg, nil
}

// Reload rebuilds the engine after the cache changed (a sweep or an import).
func (b *EngineBackend) Reload(ctx context.Context) error {
	e, err := NewEngine(ctx, b.cache)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, net := range b.added { // the cache has them too, unless there is no cache
		if err := e.AddNetwork(net); err != nil {
			return err
		}
	}
	b.engine = e
	return nil
}

// Warnings says what the engine left out of the cache at its last load, and why.
func (b *EngineBackend) Warnings() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.engine.Warnings()
}

// Close stops the cache watches and closes the cache.
func (b *EngineBackend) Close() error {
	if b.stop != nil {
		b.stop()
	}
	if b.cache == nil {
		return nil
	}
	return b.cache.Close()
}

// ModelChoices lists the zoo by family, then the custom models in the order added.
func (b *EngineBackend) ModelChoices() []ModelChoice {
	var out []ModelChoice
	for _, n := range cnn.Names() {
		out = append(out, ModelChoice{Name: n, Family: cnn.Family(n)})
	}
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	for _, n := range e.CustomNames() {
		out = append(out, ModelChoice{Name: n, Family: "Custom", Custom: true})
	}
	return out
}

// MachineChoices lists the catalog's machines and the user's.
func (b *EngineBackend) MachineChoices(ctx context.Context) ([]hw.Machine, error) {
	return Machines(ctx, b.cache)
}

// AddCustomModel reads a custom model (cnn.ParseCustom's JSON format), saves it in the
// cache and registers it with the engine; a model of the same name is replaced. A
// model that does not read or cannot be saved changes nothing.
func (b *EngineBackend) AddCustomModel(data []byte) (string, error) {
	net, err := cnn.ParseCustom(data)
	if err != nil {
		return "", fmt.Errorf("read the custom model: %w", err)
	}
	if err := b.addNetwork(net, data); err != nil {
		return "", err
	}
	return net.Name, nil
}

// PredictCurves predicts every model × machine of the settings, models outer. A CNN or
// machine the cache no longer has (another program removed it) is left out and the
// others are predicted: the error is then a *MissingError with the curves.
func (b *EngineBackend) PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error) {
	e, q, missing, err := b.query(s)
	if err != nil {
		return nil, err
	}
	var curves []predictor.Curve
	if len(q.Models) > 0 && len(q.Targets) > 0 {
		if curves, err = e.Curves(ctx, q); err != nil {
			return nil, err
		}
	}
	if len(missing.Models)+len(missing.Machines) > 0 {
		return curves, &missing
	}
	return curves, nil
}

// Warm prepares the engine for the predictions of s (their step tables), one curve at
// a time on the calling goroutine so that it leaves the other cores to the window; it
// stops when ctx ends. PredictCurves of s then comes at once.
func (b *EngineBackend) Warm(ctx context.Context, s SessionSettings) error {
	e, q, _, err := b.query(s)
	if err != nil || len(q.Models) == 0 || len(q.Targets) == 0 {
		return err
	}
	p, err := e.plan(q)
	if err != nil {
		return err
	}
	for i := range p.count() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := p.curve(i, nil); err != nil {
			return err
		}
	}
	return nil
}

// query is the engine and the query of the settings, with the selected CNNs and
// machines the engine does not have left out and named in missing.
func (b *EngineBackend) query(s SessionSettings) (*Engine, Query, MissingError, error) {
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	var missing MissingError
	known := map[string]bool{}
	for _, id := range e.MachineIDs() {
		known[strings.ToLower(id)] = true
	}
	targets := make([]Target, 0, len(s.Machines))
	for _, id := range s.Machines {
		t, err := e.MachineTarget(id)
		if err != nil {
			if !known[strings.ToLower(id)] && !e.isLocal(id) {
				missing.Machines = append(missing.Machines, id)
				continue
			}
			return nil, Query{}, missing, err
		}
		targets = append(targets, t)
	}
	custom := e.CustomNames()
	var models []string
	for _, name := range s.Models {
		if cnn.Family(name) == "" && !slices.Contains(custom, name) {
			missing.Models = append(missing.Models, name)
			continue
		}
		models = append(models, name)
	}
	q, err := s.query()
	if err != nil {
		return nil, Query{}, missing, err
	}
	q.Models, q.Targets, q.Span = models, targets, BatchSpan{Min: s.BatchMin, Cap: s.BatchMax}
	return e, q, missing, nil
}

// MissingError names the selected CNNs and machines the cache does not have (any more):
// another program removed them, or the cache was replaced. They stay selected, and
// the others are predicted.
type MissingError struct {
	Models, Machines []string
}

func (e *MissingError) Error() string {
	var parts []string
	if len(e.Models) > 0 {
		parts = append(parts, "CNN "+strings.Join(e.Models, ", "))
	}
	if len(e.Machines) > 0 {
		parts = append(parts, "machine "+strings.Join(e.Machines, ", "))
	}
	return fmt.Sprintf("not predicted: %s, not in the cache any more (removed by another program?); the rest is shown. Untick it, or add it back ('cnntime machine add'; a model with File, Add model)",
		strings.Join(parts, " and "))
}

// Explainer is a SessionBackend that can say why a number is what it is; the app's
// engine is one.
type Explainer interface {
	// Explain explains model on machine at a global batch size under the settings'
	// run (precision, run data, epochs, images), as PredictCurves predicts it.
	Explain(ctx context.Context, s SessionSettings, model, machine string, batch int) (predictor.Explanation, error)
}

// Explain explains one point of PredictCurves' curves (see Engine.Explain).
func (b *EngineBackend) Explain(ctx context.Context, s SessionSettings, model, machine string, batch int) (predictor.Explanation, error) {
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	t, err := e.MachineTarget(machine)
	if err != nil {
		return predictor.Explanation{}, err
	}
	q, err := s.query()
	if err != nil {
		return predictor.Explanation{}, err
	}
	return e.Explain(ctx, q, model, t, batch)
}

// UpdatePrices downloads SkyPilot's catalog of each default cloud (see prices.Update)
// and, when any cloud's prices changed, reloads the engine so every machine's price is
// the new one. A cloud that failed keeps its prices; the error then names it.
func (b *EngineBackend) UpdatePrices(ctx context.Context) (prices.Report, error) {
	if b.cache == nil {
		return prices.Report{}, errNoCache("update prices")
	}
	rep, err := prices.Update(ctx, b.cache, prices.UpdateOptions{})
	if rep.Changed() {
		if rerr := b.Reload(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}
	return rep, err
}

// ImportPrices reads a SkyPilot catalog (a cloud's vms.csv, whose cloud is its folder's
// name, or a folder of clouds) into the cache, all or nothing, and reloads the engine.
func (b *EngineBackend) ImportPrices(ctx context.Context, path string) (prices.Report, error) {
	if b.cache == nil {
		return prices.Report{}, errNoCache("import prices")
	}
	rep, err := prices.Import(ctx, b.cache, path, prices.ImportOptions{})
	if err != nil {
		return prices.Report{}, err
	}
	if err := b.Reload(ctx); err != nil {
		return prices.Report{}, err
	}
	return rep, nil
}

// errNoCache says that what needs the measurement cache cannot be done without one.
func errNoCache(what string) error {
	return fmt.Errorf("%s: the app runs without a measurement cache (it could not be opened at start); restart it with a writable --db file", what)
}

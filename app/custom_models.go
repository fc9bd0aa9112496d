package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cnntime/db"
	"cnntime/predictor/cnn"
)

// ReadSavedModels reads the custom models saved in the cache (by the app's File → Add
// model…), in the order they were saved. A saved model that no longer reads (written
// for another cnntime version, say) or that CheckCustomNetwork refuses is left out and
// said so in warnings; the others still come back.
func ReadSavedModels(ctx context.Context, d *db.DB) (nets []*cnn.Network, warnings []string, err error) {
	saved, err := d.CustomModels(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range saved {
		net, err := ParseSavedModel(m)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("the custom model %s saved in %s was left out: %v", Printable(m.Name), d.Path(), err))
			continue
		}
		nets = append(nets, net)
	}
	return nets, warnings, nil
}

// parseSavedModel reads one saved custom model and checks it can join an engine.
func ParseSavedModel(m db.CustomModel) (*cnn.Network, error) {
	net, err := cnn.ParseCustom(m.JSON)
	if err != nil {
		return nil, err
	}
	if err := CheckCustomNetwork(net); err != nil {
		return nil, err
	}
	return net, nil
}

// RemoveNetwork forgets a custom network added with AddNetwork; it reports whether
// there was one of that name. Zoo models are not custom and are never removed.
func (e *Engine) RemoveNetwork(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.Index(e.custom, name)
	if i < 0 {
		return false
	}
	e.custom = slices.Delete(e.custom, i, i+1)
	delete(e.nets, name)
	return true
}

// CustomModelRemover is a SessionBackend that can take back the user's custom models.
type CustomModelRemover interface {
	// RemovableModels lists the custom models one can remove: those in use and those
	// saved in the cache but left out at start (see Warnings), in the order saved.
	RemovableModels(ctx context.Context) ([]string, error)
	// RemoveCustomModel deletes a custom model from the cache and from the models in use.
	RemoveCustomModel(ctx context.Context, name string) error
}

// StartWarnings is a SessionBackend that can say what it left out when it loaded.
type StartWarnings interface {
	Warnings() []string
}

// RemovableModels lists the saved custom models, the ones that no longer read included,
// then those added without a cache to save them in.
func (b *EngineBackend) RemovableModels(ctx context.Context) ([]string, error) {
	var names []string
	if b.cache != nil {
		saved, err := b.cache.CustomModels(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range saved {
			names = append(names, m.Name)
		}
	}
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	for _, n := range e.CustomNames() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// RemoveCustomModel deletes the custom model called name from the cache and rebuilds the
// engine without it, so it leaves the model list and its start-up warning, if it had
// one, goes. A name that is neither saved nor in use is an error and changes nothing.
func (b *EngineBackend) RemoveCustomModel(ctx context.Context, name string) error {
	removable, err := b.RemovableModels(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(removable, name) {
		return fmt.Errorf("remove custom model: there is no custom model %q%s", name, Suggest(name, removable))
	}
	if b.cache != nil {
		if err := b.cache.RemoveCustomModel(ctx, name); err != nil && !errors.Is(err, db.ErrNotFound) {
			return err
		}
	}
	b.mu.Lock()
	b.added = slices.DeleteFunc(b.added, func(n *cnn.Network) bool { return n.Name == name })
	b.mu.Unlock()
	return b.Reload(ctx)
}

// RemovableModels lists the custom models the user can remove; none when the backend
// cannot remove models.
func (s *Session) RemovableModels(ctx context.Context) ([]string, error) {
	r, ok := s.backend.(CustomModelRemover)
	if !ok {
		return nil, nil
	}
	return r.RemovableModels(ctx)
}

// RemoveCustomModel deletes a custom model through the backend and takes it out of the
// selection. On an error nothing changes.
func (s *Session) RemoveCustomModel(ctx context.Context, name string) error {
	r, ok := s.backend.(CustomModelRemover)
	if !ok {
		return errors.New("remove custom model: this window cannot remove models")
	}
	if err := r.RemoveCustomModel(ctx, name); err != nil {
		return err
	}
	return s.SetModel(name, false)
}

// Warnings says what the backend left out when it loaded (a saved custom model that no
// longer reads, a measured machine that cannot be predicted); none when it cannot say.
func (s *Session) Warnings() []string {
	if w, ok := s.backend.(StartWarnings); ok {
		return w.Warnings()
	}
	return nil
}

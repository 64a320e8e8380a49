package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/experimentalmachines/exe-expo/internal/netutil"
)

// newRetryClient wraps hc in the Python client's retry policy: 408, 429, 500, 502, 503, 504
// and transport errors, exponential backoff from 1 s capped at 8 s, five retries, and the
// Hub's RateLimit header honoured on 429. With retry false it sends once.
func newRetryClient(hc *http.Client, opts Options, log *slog.Logger, retry bool) *retryablehttp.Client {
	rc := &retryablehttp.Client{
		HTTPClient:   hc,
		RetryWaitMin: orDuration(opts.RetryWaitMin, time.Second),
		RetryWaitMax: orDuration(opts.RetryWaitMax, 8*time.Second),
		RetryMax:     opts.RetryMax,
		CheckRetry:   checkRetry,
		Backoff:      backoff(orDuration(opts.MaxRateLimitWait, 5*time.Minute)),
		ErrorHandler: keepLastResponse,
		RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, attempt int) {
			if attempt > 0 {
				log.Debug("hub: retrying", "method", r.Method, "url", redact(r.URL.String()), "attempt", attempt)
			}
		},
	}
	if rc.RetryMax == 0 {
		rc.RetryMax = 5
	}
	if !retry || rc.RetryMax < 0 {
		rc.RetryMax = 0
	}
	return rc
}

// dialRetries is how many times one request is sent again after its connection could not
// be made: once rides out a blip, more only delays the sentence.
const dialRetries = 1

// dialBudgetKey keys the count of a request's failed connections in its context, which is
// all that checkRetry sees of the request.
type dialBudgetKey struct{}

// withDialBudget gives a request a fresh count of failed connections.
func withDialBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, dialBudgetKey{}, new(atomic.Int32))
}

// retryDial counts one failed connection and says whether the request may be sent again.
func retryDial(ctx context.Context) bool {
	n, ok := ctx.Value(dialBudgetKey{}).(*atomic.Int32)
	return ok && n.Add(1) <= dialRetries
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// checkRetry is the Python client's list of retryable statuses; 501 and other 4xx are final.
// A connection that could not be made (no such host, refused, no route) is retried once,
// not five times: on a machine without network the five would cost 23 s to say the same.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if netutil.Unreachable(err) != nil {
		return retryDial(ctx), nil
	}
	if err != nil {
		return !errors.Is(err, context.Canceled), nil
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, nil
	}
	return false, nil
}

// keepLastResponse hands the last response back once retries run out, so that its status and
// X-Error-Code become a typed *Error instead of a bare "giving up". A transport error loses
// its *url.Error wrapper: do quotes the method and URL already, once. A connection that
// could not be made becomes the sentence that names the host.
func keepLastResponse(resp *http.Response, err error, tries int) (*http.Response, error) {
	if resp != nil {
		return resp, nil
	}
	if u := netutil.Unreachable(err); u != nil {
		return nil, u
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if tries <= 1 {
		return nil, err
	}
	return nil, fmt.Errorf("no answer after %d attempts: %w", tries, err)
}

// backoff waits what a 429 or 503 asks for (RateLimit r=0;t=N → N+1 s, else Retry-After),
// capped at maxWait, and otherwise doubles from min up to max.
func backoff(maxWait time.Duration) retryablehttp.Backoff {
	return func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			if d, ok := serverWait(resp.Header); ok {
				return clamp(d, maxWait)
			}
		}
		d := min << uint(attempt)
		if d > max || d <= 0 {
			d = max
		}
		return d
	}
}

func clamp(d, max time.Duration) time.Duration {
	if d > max {
		return max
	}
	if d < 0 {
		return 0
	}
	return d
}

var rateLimitRe = regexp.MustCompile(`;\s*r=(\d+)\s*;\s*t=(\d+)`)

// serverWait reads how long the server asked us to wait: the IETF RateLimit header when the
// quota is spent, else Retry-After in seconds or as an HTTP date.
func serverWait(h http.Header) (time.Duration, bool) {
	if m := rateLimitRe.FindStringSubmatch(h.Get("RateLimit")); m != nil && m[1] == "0" {
		t, _ := strconv.Atoi(m[2])
		return time.Duration(t+1) * time.Second, true
	}
	ra := h.Get("Retry-After")
	if ra == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(ra); err == nil {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(ra); err == nil {
		return time.Until(t), true
	}
	return 0, false
}

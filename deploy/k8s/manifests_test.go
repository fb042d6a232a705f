// Checks of the Kubernetes manifests in this folder. Every YAML document
// decodes strictly into its typed object (an unknown field, a wrong type or
// an unknown kind is an error), then validate checks the wiring a schema
// cannot see, against the real program rather than against copies of its
// names: the container's args parse as `krun serve` flags (the real cobra
// command, run with a runF that only captures the options), and the probe
// paths and the HPA's metric are ones the real server answers (serve.Server
// started in-process without a model, on a loopback port).
//
// The mutation tests feed validate planted mistakes and require each to be
// reported with a message naming it.
package k8s_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/krun"
	"github.com/ktune/ktune/model/serve"
)

// Probe paths and budgets the server's behaviour asks for.
const (
	readyPath  = "/ready"  // 200 only while the server admits work
	healthPath = "/health" // liveness: 503 while loading, 200 after
	// minStartup is the least time the startup probe must allow for a
	// model load: a 4-30 GB file, read once by a GGUF scale scan.
	minStartup = 10 * time.Minute
	// cancelWait is how long serve.Server.Serve waits for the requests it
	// cancelled after --grace to end their streams.
	cancelWait = 5 * time.Second
)

// doc is one YAML document of a manifest file.
type doc struct {
	File string // base name, for messages
	N    int    // 1-based position in the file
	Src  []byte
}

func (d doc) String() string { return fmt.Sprintf("%s#%d", d.File, d.N) }

// splitDocs cuts a YAML stream at its `---` lines, dropping documents that
// hold only comments and blank lines.
func splitDocs(file string, src []byte) []doc {
	var docs []doc
	var cur [][]byte
	n := 0
	flush := func() {
		n++
		body := bytes.Join(cur, []byte("\n"))
		cur = nil
		for _, l := range bytes.Split(body, []byte("\n")) {
			if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
				docs = append(docs, doc{File: file, N: n, Src: body})
				return
			}
		}
	}
	for _, l := range bytes.Split(src, []byte("\n")) {
		if t := bytes.TrimRight(l, " \t\r"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return docs
}

// manifestFiles reads this folder's YAML files.
func manifestFiles(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob("*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	for _, want := range []string{"deployment.yaml", "service.yaml", "hpa.yaml"} {
		if files[want] == nil {
			t.Errorf("no %s in deploy/k8s", want)
		}
	}
	return files
}

// docsOf splits every file into documents, in file-name order.
func docsOf(files map[string][]byte) []doc {
	var docs []doc
	for _, n := range slices.Sorted(maps.Keys(files)) {
		docs = append(docs, splitDocs(n, files[n])...)
	}
	return docs
}

// ---- the validator

// obj is a decoded object and where it came from ("service.yaml#1 Service
// ktune").
type obj[T any] struct {
	at string
	o  *T
}

type validator struct {
	errs        []error
	deployments []obj[appsv1.Deployment]
	services    []obj[corev1.Service]
	hpas        []obj[autoscalingv2.HorizontalPodAutoscaler]
	pvcs        []obj[corev1.PersistentVolumeClaim]
	configMaps  []obj[corev1.ConfigMap]
	serving     map[*appsv1.Deployment]*served // the krun serve container of each Deployment
}

// served is what a Deployment's krun serve container says.
type served struct {
	c     *corev1.Container
	opts  *krun.ServeOptions
	grace time.Duration // --grace
	delay time.Duration // --drain-delay (0 where krun has no such flag)
}

func (v *validator) errorf(at, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...)))
}

// validate decodes docs strictly and checks how they fit together and
// with the real server and command line.
func validate(docs []doc) []error {
	v := &validator{serving: map[*appsv1.Deployment]*served{}}
	for _, d := range docs {
		v.decode(d)
	}
	if _, err := facts(); err != nil {
		v.errorf("server", "%v", err)
		return v.errs
	}
	for _, d := range v.deployments {
		v.checkDeployment(d)
	}
	for _, s := range v.services {
		v.checkService(s)
	}
	rules := v.adapterRules()
	for _, h := range v.hpas {
		v.checkHPA(h, rules)
	}
	return v.errs
}

// decode reads d's apiVersion and kind and decodes it strictly into the
// typed object. An object that fails only the strict decode (an unknown
// field) is still decoded leniently and checked, so that one misspelled
// field does not hide the rest.
func (v *validator) decode(d doc) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(d.Src, &head); err != nil {
		v.errorf(d.String(), "not a YAML object: %v", err)
		return
	}
	at := fmt.Sprintf("%s %s %s", d, head.Kind, head.Metadata.Name)
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		v.deployments = decodeAs(v, at, d.Src, v.deployments)
	case "v1 Service":
		v.services = decodeAs(v, at, d.Src, v.services)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		v.hpas = decodeAs(v, at, d.Src, v.hpas)
	case "v1 PersistentVolumeClaim":
		v.pvcs = decodeAs(v, at, d.Src, v.pvcs)
	case "v1 ConfigMap":
		v.configMaps = decodeAs(v, at, d.Src, v.configMaps)
	default:
		v.errorf(d.String(), "unknown kind %q of apiVersion %q (want apps/v1 Deployment, v1 Service, autoscaling/v2 HorizontalPodAutoscaler, v1 PersistentVolumeClaim or v1 ConfigMap)", head.Kind, head.APIVersion)
		return
	}
	if errs := validation.IsDNS1123Subdomain(head.Metadata.Name); len(errs) > 0 {
		v.errorf(at, "metadata.name %q: %s", head.Metadata.Name, strings.Join(errs, "; "))
	}
}

func decodeAs[T any](v *validator, at string, src []byte, list []obj[T]) []obj[T] {
	o := new(T)
	if err := yaml.UnmarshalStrict(src, o); err != nil {
		v.errorf(at, "%s", decodeError(err))
		o = new(T)
		if yaml.Unmarshal(src, o) != nil {
			return list // a wrong type: nothing to check
		}
	}
	return append(list, obj[T]{at, o})
}

// decodeError drops sigs.k8s.io/yaml's prefix from a decoding error.
func decodeError(err error) string {
	s := err.Error()
	for _, p := range []string{"error unmarshaling JSON: ", "while decoding JSON: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

func (v *validator) checkDeployment(d obj[appsv1.Deployment]) {
	spec := &d.o.Spec
	pod := &spec.Template.Spec
	if spec.Replicas != nil && *spec.Replicas < 1 {
		v.errorf(d.at, "spec.replicas %d: want at least 1", *spec.Replicas)
	}
	if spec.Selector == nil {
		v.errorf(d.at, "no spec.selector")
	} else if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		v.errorf(d.at, "spec.selector: %v", err)
	} else if sel.Empty() || !sel.Matches(labels.Set(spec.Template.Labels)) {
		v.errorf(d.at, "spec.selector %q does not select the pod template's labels %v", sel, spec.Template.Labels)
	}

	// What the API server would refuse: label syntax, port names.
	for k, val := range spec.Template.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(val)...); len(errs) > 0 {
			v.errorf(d.at, "pod label %s=%s: %s", k, val, strings.Join(errs, "; "))
		}
	}
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if errs := validation.IsValidPortName(p.Name); p.Name != "" && len(errs) > 0 {
				v.errorf(d.at, "container %s port name %q: %s", c.Name, p.Name, strings.Join(errs, "; "))
			}
		}
	}

	// The container that runs krun serve.
	var s *served
	for i := range pod.Containers {
		c := &pod.Containers[i]
		argv := c.Args
		if len(c.Command) > 0 {
			if filepath.Base(c.Command[0]) != "krun" {
				continue
			}
			argv = append(slices.Clone(c.Command[1:]), c.Args...)
		}
		if len(argv) == 0 || argv[0] != "serve" {
			continue
		}
		at := fmt.Sprintf("%s container %s", d.at, c.Name)
		if s != nil {
			v.errorf(at, "a second krun serve container")
			continue
		}
		opts, grace, delay, err := parseServe(argv)
		if err != nil {
			v.errorf(at, "args do not parse as `krun serve` flags: %v (args %q)", err, argv)
			return
		}
		s = &served{c: c, opts: opts, grace: grace, delay: delay}
		v.serving[d.o] = s
		v.checkServeContainer(d, at, s)
	}
	if s == nil {
		v.errorf(d.at, "no container runs `krun serve` (args starting with serve, the image's ENTRYPOINT being krun)")
		return
	}

	// Draining: the kubelet's SIGKILL must not come before the server is done.
	tg := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if p := pod.TerminationGracePeriodSeconds; p != nil {
		tg = time.Duration(*p) * time.Second
	}
	if need := max(s.grace+cancelWait, s.delay); tg <= need {
		v.errorf(d.at, "terminationGracePeriodSeconds %d is not above the server's drain: --grace %s + %s for cancelled streams (--drain-delay %s); the kubelet would kill requests that were allowed to finish",
			int(tg/time.Second), s.grace, cancelWait, s.delay)
	}

	// Prometheus' pod annotations name the server's /metrics.
	ann := spec.Template.Annotations
	port := strconv.Itoa(s.opts.Port)
	if ann["prometheus.io/scrape"] != "true" {
		v.errorf(d.at, `pod annotation prometheus.io/scrape is %q; want "true"`, ann["prometheus.io/scrape"])
	}
	if ann["prometheus.io/port"] != port {
		v.errorf(d.at, "pod annotation prometheus.io/port is %q; the server listens on --port %s", ann["prometheus.io/port"], port)
	}
	if p := ann["prometheus.io/path"]; p != "/metrics" {
		v.errorf(d.at, "pod annotation prometheus.io/path is %q; the server's metrics are at /metrics", p)
	}
}

func (v *validator) checkServeContainer(d obj[appsv1.Deployment], at string, s *served) {
	f, _ := facts()
	c, o := s.c, s.opts
	pod := &d.o.Spec.Template.Spec

	if ip := net.ParseIP(o.Host); o.Host == "localhost" || ip != nil && ip.IsLoopback() {
		v.errorf(at, "--host %s listens on loopback only: probes and the Service cannot reach it (give --host 0.0.0.0)", o.Host)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return int(p.ContainerPort) == o.Port }) {
		v.errorf(at, "--port %d is not among the container's ports %s", o.Port, portList(c.Ports))
	}

	// The model file lies on a read-only volume.
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		if rel, err := filepath.Rel(m.MountPath, o.Model); err == nil && filepath.IsAbs(o.Model) && !strings.HasPrefix(rel, "..") && rel != "." {
			if mount == nil || len(m.MountPath) > len(mount.MountPath) {
				mount = m
			}
		}
	}
	switch {
	case mount == nil:
		v.errorf(at, "the model %s is on none of the container's volume mounts", o.Model)
	case !mount.ReadOnly:
		v.errorf(at, "the model's volume mount %s is not readOnly", mount.MountPath)
	default:
		i := slices.IndexFunc(pod.Volumes, func(vol corev1.Volume) bool { return vol.Name == mount.Name })
		switch {
		case i < 0:
			v.errorf(at, "volume mount %s names no volume %q of the pod", mount.MountPath, mount.Name)
		case pod.Volumes[i].PersistentVolumeClaim != nil:
			claim := pod.Volumes[i].PersistentVolumeClaim.ClaimName
			if len(v.pvcs) > 0 && !slices.ContainsFunc(v.pvcs, func(p obj[corev1.PersistentVolumeClaim]) bool { return p.o.Name == claim }) {
				v.errorf(at, "the model's volume claims %q, which no PersistentVolumeClaim here defines", claim)
			}
		case pod.Volumes[i].HostPath == nil:
			v.errorf(at, "the model's volume %q is neither a PersistentVolumeClaim nor a hostPath", mount.Name)
		}
	}

	// Probes: their paths are the server's, their ports the one it listens on.
	for _, p := range []struct {
		field string
		probe *corev1.Probe
		path  string
	}{{"startupProbe", c.StartupProbe, healthPath}, {"livenessProbe", c.LivenessProbe, healthPath}, {"readinessProbe", c.ReadinessProbe, readyPath}} {
		if p.probe == nil {
			v.errorf(at, "no %s (want GET %s)", p.field, p.path)
			continue
		}
		g := p.probe.HTTPGet
		if g == nil {
			v.errorf(at, "%s is not an httpGet probe (want GET %s)", p.field, p.path)
			continue
		}
		if g.Path != p.path {
			v.errorf(at, "%s path %q: want %s", p.field, g.Path, p.path)
		}
		if code, ok := f.status[g.Path]; ok && code == http.StatusNotFound {
			v.errorf(at, "%s path %q: the server answers 404 there", p.field, g.Path)
		}
		if n, ok := containerPort(c, g.Port); !ok {
			v.errorf(at, "%s port %q names no port of the container %s", p.field, g.Port.String(), portList(c.Ports))
		} else if n != o.Port {
			v.errorf(at, "%s port %q is %d; the server listens on --port %d", p.field, g.Port.String(), n, o.Port)
		}
	}
	if p := c.ReadinessProbe; p != nil && p.FailureThreshold != 1 {
		v.errorf(at, "readinessProbe failureThreshold %d (0: 3): want 1, so that a draining pod (/ready 503 at once) leaves at the first failure", p.FailureThreshold)
	}
	if p := c.StartupProbe; p != nil {
		if budget := probeBudget(p); budget < minStartup {
			v.errorf(at, "startupProbe allows %s (periodSeconds × failureThreshold) for the model load; want at least %s", budget, minStartup)
		}
	}

	// Resources: set, and --threads within the CPU limit.
	for _, kind := range []string{"requests", "limits"} {
		rl := c.Resources.Requests
		if kind == "limits" {
			rl = c.Resources.Limits
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := rl[r]; !ok {
				v.errorf(at, "resources.%s.%s is not set", kind, r)
			}
		}
	}
	if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && o.Threads > 0 {
		if cores := cpu.MilliValue(); int64(o.Threads)*1000 > cores {
			v.errorf(at, "--threads %d exceeds the CPU limit %s: krun clamps to the cgroup's quota", o.Threads, cpu.String())
		}
	}
	if req, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && req.Cmp(lim) > 0 {
			v.errorf(at, "memory request %s exceeds the limit %s", req.String(), lim.String())
		}
		if least := resource.MustParse("2Gi"); req.Cmp(least) < 0 {
			v.errorf(at, "memory request %s is below %s: the model file alone is 4-30 GB", req.String(), least.String())
		}
	}
}

func probeBudget(p *corev1.Probe) time.Duration {
	period, fails := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10
	}
	if fails == 0 {
		fails = 3
	}
	return time.Duration(period) * time.Duration(fails) * time.Second
}

// containerPort resolves a port by name or number among c's ports.
func containerPort(c *corev1.Container, p intstr.IntOrString) (int, bool) {
	for _, cp := range c.Ports {
		if p.Type == intstr.String && cp.Name == p.StrVal || p.Type == intstr.Int && cp.ContainerPort == p.IntVal {
			return int(cp.ContainerPort), true
		}
	}
	return 0, false
}

func portList(ps []corev1.ContainerPort) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%s=%d", p.Name, p.ContainerPort))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func (v *validator) checkService(s obj[corev1.Service]) {
	sel := s.o.Spec.Selector
	if len(sel) == 0 {
		v.errorf(s.at, "no selector: the Service would reach no ktune pod")
		return
	}
	var matched []obj[appsv1.Deployment]
	var seen []string
	for _, d := range v.deployments {
		l := d.o.Spec.Template.Labels
		seen = append(seen, fmt.Sprintf("%s %v", d.o.Name, l))
		if labels.SelectorFromSet(sel).Matches(labels.Set(l)) {
			matched = append(matched, d)
		}
	}
	if len(matched) == 0 {
		v.errorf(s.at, "selector %v matches no Deployment's pods (pod labels: %s)", sel, strings.Join(seen, "; "))
		return
	}
	for _, p := range s.o.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port) // unset: the Service's port
		}
		for _, d := range matched {
			srv := v.serving[d.o]
			if srv == nil {
				continue
			}
			n, ok := containerPort(srv.c, target)
			switch {
			case !ok:
				v.errorf(s.at, "port %q: targetPort %q names no port of Deployment %s's container %s %s", p.Name, target.String(), d.o.Name, srv.c.Name, portList(srv.c.Ports))
			case n != srv.opts.Port:
				v.errorf(s.at, "port %q: targetPort %q is %d; the server listens on --port %d", p.Name, target.String(), n, srv.opts.Port)
			}
		}
	}
}

func (v *validator) checkHPA(h obj[autoscalingv2.HorizontalPodAutoscaler], rules map[string]string) {
	f, _ := facts()
	spec := &h.o.Spec
	ref := spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" ||
		!slices.ContainsFunc(v.deployments, func(d obj[appsv1.Deployment]) bool { return d.o.Name == ref.Name }) {
		v.errorf(h.at, "scaleTargetRef %s %s %q names no Deployment here", ref.APIVersion, ref.Kind, ref.Name)
	}
	minR := int32(1)
	if spec.MinReplicas != nil {
		minR = *spec.MinReplicas
	}
	if minR < 1 || spec.MaxReplicas < minR {
		v.errorf(h.at, "replicas from %d to %d: want 1 <= minReplicas <= maxReplicas", minR, spec.MaxReplicas)
	}
	if len(spec.Metrics) == 0 {
		v.errorf(h.at, "no metrics")
	}
	for _, m := range spec.Metrics {
		if m.Type != autoscalingv2.PodsMetricSourceType {
			continue
		}
		if m.Pods == nil {
			v.errorf(h.at, "a metric of type Pods without pods")
			continue
		}
		name := m.Pods.Metric.Name
		if !f.metrics[name] {
			v.errorf(h.at, "Pods metric %q is not exported by the server's /metrics%s", name, nearest(name, f.metrics))
		}
		if m.Pods.Target.Type != autoscalingv2.AverageValueMetricType || m.Pods.Target.AverageValue == nil {
			v.errorf(h.at, "Pods metric %q: target type %q; a Pods metric takes an averageValue", name, m.Pods.Target.Type)
		}
		if len(rules) > 0 && rules[name] == "" {
			v.errorf(h.at, "Pods metric %q: no prometheus-adapter rule here exposes it (they expose %v)", name, slices.Sorted(maps.Keys(rules)))
		}
	}
}

// adapterRule is a prometheus-adapter discovery rule (its config.yaml).
type adapterRule struct {
	SeriesQuery   string `json:"seriesQuery"`
	SeriesFilters []any  `json:"seriesFilters,omitempty"`
	Resources     struct {
		Overrides map[string]adapterOverride `json:"overrides,omitempty"`
		Template  string                     `json:"template,omitempty"`
	} `json:"resources"`
	Name struct {
		Matches string `json:"matches,omitempty"`
		As      string `json:"as,omitempty"`
	} `json:"name,omitempty"`
	MetricsQuery string `json:"metricsQuery"`
}

// adapterOverride maps a Prometheus label to a Kubernetes resource.
type adapterOverride struct {
	Group    string `json:"group,omitempty"`
	Resource string `json:"resource"`
}

// adapterRules reads the prometheus-adapter rules of the ConfigMaps that
// hold a config.yaml and returns the metrics they expose, each with the
// series it reads.
func (v *validator) adapterRules() map[string]string {
	f, _ := facts()
	exposed := map[string]string{}
	for _, cm := range v.configMaps {
		src, ok := cm.o.Data["config.yaml"]
		if !ok {
			continue
		}
		var conf struct {
			Rules         []adapterRule `json:"rules"`
			ExternalRules []adapterRule `json:"externalRules,omitempty"`
			ResourceRules any           `json:"resourceRules,omitempty"`
		}
		if err := yaml.UnmarshalStrict([]byte(src), &conf); err != nil {
			v.errorf(cm.at, "config.yaml is not a prometheus-adapter configuration: %s", decodeError(err))
			continue
		}
		for i, r := range conf.Rules {
			at := fmt.Sprintf("%s rules[%d]", cm.at, i)
			series, _, _ := strings.Cut(strings.TrimSpace(r.SeriesQuery), "{")
			if !f.metrics[series] {
				v.errorf(at, "seriesQuery %q: the server exports no series %q%s", r.SeriesQuery, series, nearest(series, f.metrics))
			}
			if r.MetricsQuery == "" {
				v.errorf(at, "no metricsQuery")
			}
			if r.Resources.Template == "" && !slices.ContainsFunc(slices.Collect(maps.Values(r.Resources.Overrides)), func(o adapterOverride) bool {
				return o.Resource == "pod" || o.Resource == "pods"
			}) {
				v.errorf(at, "resources map no label to pods: an HPA's Pods metric is read per pod")
			}
			name := series
			if r.Name.Matches != "" {
				re, err := regexp.Compile(r.Name.Matches)
				if err != nil {
					v.errorf(at, "name.matches: %v", err)
					continue
				}
				m := re.FindStringSubmatchIndex(series)
				if m == nil {
					v.errorf(at, "name.matches %q does not match the series %q", r.Name.Matches, series)
					continue
				}
				as := r.Name.As
				if as == "" { // the adapter's default
					as = "$0"
					if re.NumSubexp() == 1 {
						as = "$1"
					}
				}
				name = string(re.ExpandString(nil, as, series, m))
			}
			exposed[name] = series
		}
	}
	return exposed
}

// nearest suggests the closest exported name to a misspelled one.
func nearest(name string, names map[string]bool) string {
	best, bestD := "", 4 // farther than 3 edits is no suggestion
	for n := range names {
		if d := editDistance(name, n); d < bestD || d == bestD && n < best {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ---- the real command line and server

// parseServe runs the real krun command tree on argv (krun's arguments,
// from "serve" on) with serve's runF capturing the options: a flag krun
// does not know, or a value its checks refuse, is an error.
func parseServe(argv []string) (o *krun.ServeOptions, grace, delay time.Duration, err error) {
	f := &cli.Factory{Out: io.Discard, Err: io.Discard}
	root := krun.NewCmdRoot(f)
	root.PersistentPreRunE = nil // --max-isa and --disable-isa would mask this process's CPU features
	for _, c := range root.Commands() {
		if c.Name() == "serve" {
			root.RemoveCommand(c)
		}
	}
	serveCmd := krun.NewCmdServe(f, func(opts *krun.ServeOptions) error { o = opts; return nil })
	root.AddCommand(serveCmd)
	root.SetArgs(argv)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SilenceErrors, root.SilenceUsage = true, true
	ran, err := root.ExecuteC()
	if err != nil {
		return nil, 0, 0, err
	}
	if ran != serveCmd || o == nil {
		return nil, 0, 0, fmt.Errorf("ran `krun %s`, not `krun serve`", ran.Name())
	}
	if fl := serveCmd.Flags().Lookup("drain-delay"); fl != nil {
		if delay, err = time.ParseDuration(fl.Value.String()); err != nil {
			return nil, 0, 0, fmt.Errorf("--drain-delay: %v", err)
		}
	}
	return o, o.Grace, delay, nil
}

// serverFacts are what the real server answers before any model is loaded.
type serverFacts struct {
	metrics map[string]bool // series names on /metrics
	status  map[string]int  // GET path → status code
}

var facts = sync.OnceValues(func() (*serverFacts, error) {
	s := serve.New(serve.Options{ModelName: "manifests-test"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done; s.Close() }()

	f := &serverFacts{metrics: map[string]bool{}, status: map[string]int{}}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{healthPath, readyPath, "/metrics"} {
		resp, err := client.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			return nil, fmt.Errorf("GET %s of the in-process server: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		f.status[path] = resp.StatusCode
		if path == "/metrics" {
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("GET /metrics of the in-process server: %s", resp.Status)
			}
			for name := range seriesNames(string(body)) {
				f.metrics[name] = true
			}
		}
	}
	return f, nil
})

// seriesNames lists the names in a Prometheus text exposition: every
// sample's name, and each HELP or TYPE line's.
func seriesNames(text string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for line := range strings.Lines(text) {
			line = strings.TrimSpace(line)
			var name string
			if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
				name, _, _ = strings.Cut(rest, " ")
			} else if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
				name, _, _ = strings.Cut(rest, " ")
			} else if line != "" && line[0] != '#' {
				name = line[:strings.IndexAny(line+" ", "{ ")]
			}
			if name != "" && !yield(name) {
				return
			}
		}
	}
}

// ---- tests

// TestManifests validates this folder's manifests.
func TestManifests(t *testing.T) {
	docs := docsOf(manifestFiles(t))
	if len(docs) == 0 {
		t.Fatal("no manifests")
	}
	for _, d := range docs {
		t.Logf("%s", d)
	}
	for _, err := range validate(docs) {
		t.Error(err)
	}
}

// TestServerFacts: the in-process server answers what the manifests rely
// on (if it fails, the validator's other findings mean little).
func TestServerFacts(t *testing.T) {
	f, err := facts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GET status: %v; %d series on /metrics", f.status, len(f.metrics))
	for _, m := range []string{"ktune_requests_waiting", "ktune_requests_running"} {
		if !f.metrics[m] {
			t.Errorf("/metrics has no %s", m)
		}
	}
	if f.status[readyPath] != http.StatusServiceUnavailable {
		t.Errorf("GET %s while loading: %d; want 503", readyPath, f.status[readyPath])
	}
}

// TestValidateRejects plants mistakes in the real manifests: each must
// bring an error that names it, beyond those the real files have.
func TestValidateRejects(t *testing.T) {
	files := manifestFiles(t)
	baseline := map[string]bool{}
	for _, err := range validate(docsOf(files)) {
		baseline[err.Error()] = true
	}
	for _, c := range []struct {
		name, file string
		re, repl   string // a regexp matching once in file, and its replacement
		want       string // in one of the new errors
	}{
		{"misspelled field", "deployment.yaml", `readinessProbe:`, `readinesProbe:`, `unknown field "readinesProbe"`},
		{"wrong type", "deployment.yaml", `replicas: 1\n`, "replicas: one\n", "spec.replicas"},
		{"unknown kind", "service.yaml", `kind: Service\n`, "kind: Servise\n", `unknown kind "Servise"`},
		{"liveness /healthz", "deployment.yaml", `(?s)(livenessProbe:.*?path: )/health`, "${1}/healthz", `livenessProbe path "/healthz": want /health`},
		{"readiness /health", "deployment.yaml", `(?s)(readinessProbe:.*?path: )/ready`, "${1}/health", `readinessProbe path "/health": want /ready`},
		{"readiness failureThreshold", "deployment.yaml", `(?s)(readinessProbe:.*?failureThreshold: )1\n`, "${1}3\n", "readinessProbe failureThreshold 3"},
		{"short startup", "deployment.yaml", `failureThreshold: 180`, "failureThreshold: 6", "startupProbe allows 1m0s"},
		{"port name too long", "deployment.yaml", `- name: http\n`, "- name: http-openai-port\n", `port name "http-openai-port": must be no more than 15`},
		{"probe port", "deployment.yaml", `(?s)(startupProbe:.*?port: )http`, "${1}web", `startupProbe port "web" names no port`},
		{"selector matches nothing", "service.yaml", `(?s)(selector:.*?name: )ktune`, "${1}ktun", "matches no Deployment's pods"},
		{"targetPort", "service.yaml", `targetPort: http`, "targetPort: htp", `targetPort "htp" names no port`},
		{"HPA metric", "hpa.yaml", `name: ktune_requests_waiting`, "name: ktune_requests_waitng", `Pods metric "ktune_requests_waitng" is not exported by the server's /metrics (did you mean "ktune_requests_waiting"?)`},
		{"HPA target", "hpa.yaml", `(?s)(scaleTargetRef:.*?name: )ktune`, "${1}ktune-old", `scaleTargetRef apps/v1 Deployment "ktune-old" names no Deployment`},
		{"unknown flag", "deployment.yaml", `--parallel=4`, "--paralel=4", "unknown flag: --paralel"},
		{"bad flag value", "deployment.yaml", `--cache-mem=2GiB`, "--cache-mem=2GB!", "--cache-mem"},
		{"loopback host", "deployment.yaml", `--host=0.0.0.0`, "--host=127.0.0.1", "--host 127.0.0.1 listens on loopback only"},
		{"port mismatch", "deployment.yaml", `--port=8080`, "--port=9000", "the server listens on --port 9000"},
		{"grace too long", "deployment.yaml", `--grace=30s`, "--grace=60s", "terminationGracePeriodSeconds 45 is not above"},
		{"threads over limit", "deployment.yaml", `--threads=16`, "--threads=32", "--threads 32 exceeds the CPU limit 16"},
		{"model off the volume", "deployment.yaml", `- /models/`, "- /data/", "is on none of the container's volume mounts"},
		{"writable model mount", "deployment.yaml", `(?s)(mountPath: /models\n\s*readOnly: )true`, "${1}false", "volume mount /models is not readOnly"},
		{"scrape port", "deployment.yaml", `prometheus.io/port: "8080"`, `prometheus.io/port: "9090"`, `prometheus.io/port is "9090"`},
		{"adapter series", "prometheus-adapter-rule.yaml", `seriesQuery: 'ktune_requests_waiting`, `seriesQuery: 'ktune_request_waiting`, `the server exports no series "ktune_request_waiting"`},
		{"adapter field", "prometheus-adapter-rule.yaml", `metricsQuery:`, "metricQuery:", `unknown field "metricQuery"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, ok := files[c.file]
			if !ok {
				t.Fatalf("no %s", c.file)
			}
			re := regexp.MustCompile(c.re)
			if n := len(re.FindAllIndex(src, -1)); n != 1 {
				t.Fatalf("%s: %q matches %d times; want once", c.file, c.re, n)
			}
			mutated := maps.Clone(files)
			mutated[c.file] = re.ReplaceAll(src, []byte(c.repl))
			var fresh []string
			for _, err := range validate(docsOf(mutated)) {
				if !baseline[err.Error()] {
					fresh = append(fresh, err.Error())
				}
			}
			if !slices.ContainsFunc(fresh, func(e string) bool { return strings.Contains(e, c.want) }) {
				t.Errorf("no new error containing %q; new errors:\n\t%s", c.want, strings.Join(fresh, "\n\t"))
			}
			for _, e := range fresh {
				t.Log(e)
			}
		})
	}
}

// TestSplitDocs: documents split on `---` lines only, comment-only ones
// dropped.
func TestSplitDocs(t *testing.T) {
	src := "# head\n---\na: 1\n---  \nb: '---'\nc: |\n  x---\n---\n# only a comment\n"
	got := splitDocs("f.yaml", []byte(src))
	if len(got) != 2 || got[0].N != 2 || got[1].N != 3 || !strings.Contains(string(got[1].Src), "x---") {
		t.Fatalf("splitDocs: %+v", got)
	}
}

// TestDockerfile: the image the Deployment names is built from ./cmd/krun,
// statically, with krun as its entry point (so args start at "serve").
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/krun", `ENTRYPOINT ["/usr/local/bin/krun"]`} {
		if !strings.Contains(src, want) {
			t.Errorf("deploy/Dockerfile has no %s", want)
		}
	}
	if _, err := os.Stat("../../cmd/krun/main.go"); err != nil {
		t.Error(err)
	}
}

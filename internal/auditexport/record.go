package auditexport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
)

// Event names of the exported records.
const (
	// EventRecord is an audit record. Its body is the record's line exactly as the local
	// log holds it (without the newline), so that a central store can recompute the chain
	// hash; its attributes are the record's fields as scode.audit.FIELD.
	EventRecord = "s-code.audit.record"
	// EventGap says the export dropped a run of records because its queue was full
	// (attributes scode.audit.gap.first_seq, .last_seq, .count). The local log has them.
	EventGap = "s-code.audit.gap"
)

// AttrPrefix begins the name of every attribute made from a record's field.
const AttrPrefix = "scode.audit."

// auditRecord fills r from one record line of the log: its time, severity, the line as the
// body, every field of the record as an attribute (nested objects as maps, arrays as
// slices), and scode.audit.seal_index, the index of the seal that covers it.
func auditRecord(r *otellog.Record, seq, sealIndex uint64, line []byte) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	r.SetEventName(EventRecord)
	r.SetBody(attribute.StringValue(string(line)))
	r.SetObservedTimestamp(time.Now())
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		// The log wrote it, so it is JSON; should that ever fail, the body still has it all.
		r.SetSeverity(otellog.SeverityWarn)
		r.AddAttributes(attribute.Int64(AttrPrefix+"seq", int64(seq)), attribute.String(AttrPrefix+"decode_error", err.Error()))
		return
	}
	if s, ok := fields["time"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			r.SetTimestamp(t)
		}
	}
	kind, _ := fields["kind"].(string)
	sev, text := otellog.SeverityInfo, "INFO"
	switch kind {
	case "denied", "refused", "recover":
		sev, text = otellog.SeverityWarn, "WARN"
	}
	r.SetSeverity(sev)
	r.SetSeverityText(text)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]attribute.KeyValue, 0, len(keys)+1)
	for _, k := range keys {
		attrs = append(attrs, attribute.KeyValue{Key: attribute.Key(AttrPrefix + k), Value: value(fields[k])})
	}
	if _, ok := fields["seal_index"]; !ok {
		attrs = append(attrs, attribute.Int64(AttrPrefix+"seal_index", int64(sealIndex)))
	}
	r.AddAttributes(attrs...)
}

// value converts a decoded JSON value: whole numbers to int64 (seq, uids, exit codes), other
// numbers to float64, objects to maps with sorted keys, arrays to slices.
func value(v any) attribute.Value {
	switch v := v.(type) {
	case string:
		return attribute.StringValue(v)
	case bool:
		return attribute.BoolValue(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return attribute.Int64Value(i)
		}
		f, _ := v.Float64()
		return attribute.Float64Value(f)
	case []any:
		vs := make([]attribute.Value, len(v))
		for i, e := range v {
			vs[i] = value(e)
		}
		return attribute.SliceValue(vs...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		kvs := make([]attribute.KeyValue, len(keys))
		for i, k := range keys {
			kvs[i] = attribute.KeyValue{Key: attribute.Key(k), Value: value(v[k])}
		}
		return attribute.MapValue(kvs...)
	case nil:
		return attribute.StringValue("")
	}
	return attribute.StringValue(fmt.Sprint(v))
}

// gapRecord fills r with a gap record for g.
func gapRecord(r *otellog.Record, g *gapInfo) {
	r.SetEventName(EventGap)
	r.SetTimestamp(g.at)
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(otellog.SeverityError)
	r.SetSeverityText("ERROR")
	r.SetBody(attribute.StringValue(fmt.Sprintf("audit export dropped %d records (seq %d to %d): its queue was full; the local audit log has them", g.count, g.first, g.last)))
	r.AddAttributes(
		attribute.Int64(AttrPrefix+"gap.first_seq", int64(g.first)),
		attribute.Int64(AttrPrefix+"gap.last_seq", int64(g.last)),
		attribute.Int64(AttrPrefix+"gap.count", int64(g.count)),
	)
}

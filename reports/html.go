package reports

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode"
)

// Report is a self-contained HTML page: tables and inline SVG figures in
// sections, no scripts and no external resources, so it can be mailed,
// attached to a CI run or opened from disk.
type Report struct {
	Title    string
	Subtitle string
	Sections []Section
	Footer   string // e.g. the ktune version and the inputs
}

// Section is a heading with paragraphs, tables and figures, in that order.
type Section struct {
	Heading    string
	Paragraphs []string
	Tables     []Table
	Figures    []Figure
}

// Table is a header and rows of preformatted cells; cells that read as
// numbers are right-aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Figure is an inline SVG (from SVG, BarFigure or RooflineFigure) with a caption.
type Figure struct {
	Caption string
	SVG     template.HTML
}

// HTML writes r as a complete HTML5 document.
func HTML(w io.Writer, r *Report) error {
	if r == nil {
		return fmt.Errorf("reports.HTML: nil report")
	}
	return page.Execute(w, r)
}

// numeric reports whether a cell reads as a figure ("1.23", "-4%",
// "+12.5%", "94.1 ± 2%", "1.8×"), to right-align it.
func numeric(s string) bool {
	s = strings.TrimLeft(strings.TrimSpace(s), "+-−~")
	return s != "" && unicode.IsDigit([]rune(s)[0])
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{"numeric": numeric}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #1b1f24; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.sub { color: #57606a; margin-top: 0; }
h2 { font-size: 1.25em; border-bottom: 1px solid #d0d7de; padding-bottom: 0.2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
th, td { border: 1px solid #d0d7de; padding: 0.3em 0.6em; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafbfc; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #57606a; font-size: 0.9em; }
footer { margin-top: 3em; color: #57606a; font-size: 0.85em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{- with .Subtitle}}
<p class="sub">{{.}}</p>
{{- end}}
{{- range .Sections}}
<section>
<h2>{{.Heading}}</h2>
{{- range .Paragraphs}}
<p>{{.}}</p>
{{- end}}
{{- range .Tables}}
<table>
{{- with .Caption}}<caption>{{.}}</caption>{{end}}
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if numeric .}} class="num"{{end}}>{{.}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- range .Figures}}
<figure>
{{.SVG}}
{{- with .Caption}}
<figcaption>{{.}}</figcaption>
{{- end}}
</figure>
{{- end}}
</section>
{{- end}}
{{- with .Footer}}
<footer>{{.}}</footer>
{{- end}}
</body>
</html>
`))

// Renders the template corpus below with Go's own html/template and text/template and writes
// what they produced (output, or the error and whether Parse or Execute returned it) to
// cases.json beside this file, which AuthTemplateTests compares with AuthTemplate byte for byte.
//
// The target is the Go that GoTrue is built with, Go 1.26. The committed file came from
// go1.23.5 (Debian 12's bookworm-backports golang-1.23-go, the newest Go Debian 12 packages),
// and the file names the toolchain in its "go" field. Where html/template or text/template
// changed between 1.23 and 1.26, the case's answer is Go 1.26's, marked
// "derived": "go1.26 source", with what the toolchain itself answered kept beside it under
// "toolchain": those answers come from the template packages' Go 1.26.3 source (with the
// regexp-after-brace fix of GO-2026-6091 that the 1.26 line took later), put in place of the
// toolchain's own with -overlay and run on the same toolchain. Regenerate in three steps:
//
//	cd Tests/Fixtures/gotemplate
//	go run generate.go                                     # the toolchain's answers
//	go run -overlay go126.json generate.go -o derived.json # the same, with Go 1.26's packages
//	go run generate.go -derived derived.json               # both, merged into cases.json
//
// where go126.json maps $GOROOT/src/{html/template,text/template,text/template/parse}/*.go to
// those files of a Go 1.26 checkout. With a Go 1.26 toolchain the first step alone is enough
// and no case is derived.
//
// The data are built as GoTrue's mailer builds them: a map[string]interface{} whose values are
// strings, with "Data" holding the user's metadata as encoding/json decodes it (objects become
// map[string]interface{}, numbers float64). Each case's data is one JSON text, decoded the same
// way; an empty text is a nil data value.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	htmltemplate "html/template"
	"os"
	"runtime"
	"strings"
	texttemplate "text/template"
)

type mode int

const (
	html mode = 1 << iota
	text
	both = html | text
)

type corpusCase struct {
	name     string
	template string
	data     string
	modes    mode
}

type fixture struct {
	Name     string          `json:"name"`
	Escaping string          `json:"escaping"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	Output   *string         `json:"output,omitempty"`
	Error    *string         `json:"error,omitempty"`
	Phase    string          `json:"phase,omitempty"`
	// Set where the answer is Go 1.26's rather than the toolchain's (see the top of the file).
	Derived   string  `json:"derived,omitempty"`
	Toolchain *answer `json:"toolchain,omitempty"`
}

// answer is one toolchain's result for a case.
type answer struct {
	Version string  `json:"version"`
	Output  *string `json:"output,omitempty"`
	Error   *string `json:"error,omitempty"`
	Phase   string  `json:"phase,omitempty"`
}

type fixtureFile struct {
	// The toolchain that rendered the cases.
	Go string `json:"go"`
	// What the derived cases' answers come from, when some are.
	DerivedFrom string    `json:"derived_from,omitempty"`
	Cases       []fixture `json:"cases"`
}

const derivedFrom = "go1.26 source"

func sameAnswer(a, b fixture) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Output, b.Output) && eq(a.Error, b.Error) && a.Phase == b.Phase
}

// The name GoTrue gives a body template is the URL it was loaded from.
const templateName = "email"

func render(c corpusCase, m mode) (f fixture) {
	// Some Go versions panic on a case (go1.23 on a piped value to call): the panic is its
	// answer, which a derived answer then replaces.
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint("panic: ", r)
			f.Output, f.Error, f.Phase = nil, &msg, "panic"
		}
	}()
	var data interface{}
	raw := json.RawMessage("null")
	if c.data != "" {
		if err := json.Unmarshal([]byte(c.data), &data); err != nil {
			panic(c.name + ": " + err.Error())
		}
		raw = json.RawMessage(c.data)
	}
	f = fixture{Name: c.name, Template: c.template, Data: raw}
	var buf bytes.Buffer
	var err error
	if m == html {
		f.Escaping = "html"
		t, perr := htmltemplate.New(templateName).Parse(c.template)
		if perr != nil {
			f.Phase, err = "parse", perr
		} else {
			f.Phase, err = "execute", t.Execute(&buf, data)
		}
	} else {
		f.Escaping = "text"
		t, perr := texttemplate.New(templateName).Parse(c.template)
		if perr != nil {
			f.Phase, err = "parse", perr
		} else {
			f.Phase, err = "execute", t.Execute(&buf, data)
		}
	}
	if err != nil {
		msg := err.Error()
		f.Error = &msg
	} else {
		out := buf.String()
		f.Output = &out
		f.Phase = ""
	}
	return f
}

func main() {
	out := flag.String("o", "cases.json", "where to write the cases")
	derivedPath := flag.String("derived", "", "the cases as Go 1.26's template packages render them, to merge in")
	flag.Parse()

	var fixtures []fixture
	for _, c := range corpus() {
		if c.modes&html != 0 {
			f := render(c, html)
			f.Name = c.name + " [html]"
			fixtures = append(fixtures, f)
		}
		if c.modes&text != 0 {
			f := render(c, text)
			f.Name = c.name + " [text]"
			fixtures = append(fixtures, f)
		}
	}
	file := fixtureFile{Go: runtime.Version(), Cases: fixtures}
	if *derivedPath != "" {
		raw, err := os.ReadFile(*derivedPath)
		if err != nil {
			panic(err)
		}
		var derived fixtureFile
		if err := json.Unmarshal(raw, &derived); err != nil {
			panic(err)
		}
		if len(derived.Cases) != len(fixtures) {
			panic("the derived cases are not this corpus's")
		}
		for i, d := range derived.Cases {
			f := &fixtures[i]
			if d.Name != f.Name {
				panic("the derived cases are not this corpus's: " + d.Name)
			}
			if sameAnswer(*f, d) {
				continue
			}
			f.Toolchain = &answer{Version: file.Go, Output: f.Output, Error: f.Error, Phase: f.Phase}
			f.Output, f.Error, f.Phase, f.Derived = d.Output, d.Error, d.Phase, derivedFrom
		}
		file.DerivedFrom = "html/template and text/template of Go 1.26.3 (with the GO-2026-6091 fix), run on " + file.Go
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(file); err != nil {
		panic(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		panic(err)
	}
}

// Data sets: what GoTrue's mailer passes for a confirmation, with ordinary, hostile, sparse and
// numeric metadata.
var dataSets = []struct{ name, json string }{
	{"typical", `{
		"SiteURL": "http://localhost:3000",
		"ConfirmationURL": "http://127.0.0.1:54321/auth/v1/verify?token=pkce_1a2b3c&type=signup&redirect_to=http://localhost:3000/welcome",
		"Email": "ada@example.com",
		"NewEmail": "ada.lovelace@example.org",
		"Token": "123456",
		"TokenHash": "pkce_0f1e2d3c4b5a69788796a5b4c3d2e1f0",
		"RedirectTo": "http://localhost:3000/welcome",
		"Data": {"first_name": "Ada", "locale": "fr", "age": 36, "plan": "pro", "tags": ["beta", "admin"], "prefs": {"theme": "dark"}}
	}`},
	{"hostile", `{
		"SiteURL": "https://exämple.com/a b",
		"ConfirmationURL": "javascript:alert(document.cookie)",
		"Email": "o'brien+test@example.com",
		"NewEmail": "\"quoted\"@example.com",
		"Token": "<b>1</b>",
		"TokenHash": "a&b=c d/é?#",
		"RedirectTo": "https://evil.example/?q=<script>&x='1'",
		"Data": {"first_name": "<script>alert(\"x\")</script> & co", "locale": "", "emoji": "😀 café – “quotes”", "nul": "a\u0000b", "tabs": "a\tb\nc\rd", "sep": "x\u2028y\u2029z", "plus": "1+1=2", "backtick": "` + "`" + `tick` + "`" + `"}
	}`},
	{"sparse", `{
		"SiteURL": "",
		"ConfirmationURL": "http://localhost:9999/verify?token=t&type=magiclink",
		"Email": "",
		"Token": "",
		"Data": {}
	}`},
	{"numbers", `{
		"SiteURL": "https://app.example.com",
		"ConfirmationURL": "https://app.example.com/confirm?x=1",
		"Email": "n@example.com",
		"Token": "000000",
		"TokenHash": "h",
		"RedirectTo": "",
		"Data": {"zero": 0, "one": 1, "neg": -2.5, "frac": 0.1, "third": 0.3333333333333333, "big": 1000000, "n123456": 123456, "n1234567": 1234567, "huge": 1e21, "e20": 1e20, "small": 0.00001, "tiny": 1e-7, "exact53": 9007199254740993, "minus0": -0.0, "yes": true, "no": false, "nothing": null, "list": [1, 2.5, "x", null, true], "first_name": "Num"}
	}`},
}

// GoTrue's and Supabase's email templates: the server's defaults, the dashboard's defaults and
// the server-side auth guides' token-hash links.
var emailTemplates = []struct{ name, template string }{
	{"gotrue confirmation", `<h2>Confirm your email address</h2>

<p>Follow the link below to confirm this email address and finish signing up.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm email address</a></p>`},
	{"gotrue email change", `<h2>Confirm your new email address</h2>

<p>Follow the link below to confirm {{ .NewEmail }} as your new email address.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm new email address</a></p>
<p>If you didn't request this change, you can safely ignore this email.</p>`},
	{"gotrue reauthentication", `<h2>Your verification code</h2>

<p>Use the code below to verify your identity. It expires shortly.</p>
<p>{{ .Token }}</p>`},
	{"dashboard confirm signup", `<h2>Confirm your signup</h2>

<p>Follow this link to confirm your user:</p>
<p><a href="{{ .ConfirmationURL }}">Confirm your mail</a></p>`},
	{"dashboard invite", `<h2>You have been invited</h2>

<p>You have been invited to create a user on {{ .SiteURL }}. Follow this link to accept the invite:</p>
<p><a href="{{ .ConfirmationURL }}">Accept the invite</a></p>`},
	{"dashboard magic link", `<h2>Magic Link</h2>

<p>Follow this link to login:</p>
<p><a href="{{ .ConfirmationURL }}">Log In</a></p>
<p>Or enter this code: {{ .Token }}</p>`},
	{"dashboard change email", `<h2>Confirm Change of Email</h2>

<p>Follow this link to confirm the update of your email from {{ .Email }} to {{ .NewEmail }}:</p>
<p><a href="{{ .ConfirmationURL }}">Change Email</a></p>`},
	{"guide token hash signup", `<h2>Confirm your signup</h2>

<p>Follow this link to confirm your user:</p>
<p>
  <a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=email&next={{ .RedirectTo }}"
    >Confirm your email</a
  >
</p>`},
	{"guide token hash recovery", `<a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=recovery&next=/account/update-password">Reset Password</a>`},
	{"guide redirect to", `<a href="{{ .RedirectTo }}/auth/confirm?token_hash={{ .TokenHash }}&type=email">Confirm</a>`},
	{"guide email change", `<p><a href="{{ .SiteURL }}/api/auth/confirm?token_hash={{ .TokenHash }}&type=email_change">Change Email</a> for {{ .Email }}</p>`},
	{"metadata greeting", `{{ if .Data.first_name }}<p>Hi {{ .Data.first_name }},</p>{{ else }}<p>Hi there,</p>{{ end }}
{{- if eq .Data.locale "fr" }}
<p>Bienvenue !</p>
{{- else }}
<p>Welcome!</p>
{{- end }}`},
	{"subject", `Confirm your signup to {{ .SiteURL }} ({{ .Email }})`},
}

func corpus() []corpusCase {
	var cs []corpusCase
	add := func(name, tpl, data string, m mode) {
		cs = append(cs, corpusCase{name, tpl, data, m})
	}
	for _, t := range emailTemplates {
		for _, d := range dataSets {
			add(t.name+" / "+d.name, t.template, d.json, both)
		}
	}
	typical, hostile, numbers := dataSets[0].json, dataSets[1].json, dataSets[3].json

	// Values in every HTML context a template can put them in.
	contexts := []struct{ name, template string }{
		{"text", `<p>{{.Data.first_name}}</p>`},
		{"double-quoted attr", `<input value="{{.Data.first_name}}">`},
		{"single-quoted attr", `<input value='{{.Data.first_name}}'>`},
		{"unquoted attr", `<input value={{.Data.first_name}}>`},
		{"unquoted attr emoji", `<input title={{.Data.emoji}} class=x>`},
		{"title attr tabs", `<p title="{{.Data.tabs}}">x</p>`},
		{"href whole", `<a href="{{.ConfirmationURL}}">x</a>`},
		{"href unquoted", `<a href={{.ConfirmationURL}}>x</a>`},
		{"href single", `<a href='{{.RedirectTo}}'>x</a>`},
		{"href path part", `<a href="{{.SiteURL}}/p/{{.TokenHash}}">x</a>`},
		{"href query part", `<a href="/confirm?t={{.TokenHash}}&e={{.Email}}">x</a>`},
		{"href fragment", `<a href="/x#{{.TokenHash}}">x</a>`},
		{"src", `<img src="{{.SiteURL}}/logo.png" alt="{{.Email}}">`},
		{"data-href", `<a data-href="{{.RedirectTo}}">x</a>`},
		{"srcset", `<img srcset="{{.SiteURL}}/a.png 1x, {{.SiteURL}}/b.png 2x">`},
		{"textarea", `<textarea>{{.Data.first_name}}</textarea>`},
		{"title element", `<title>{{.Data.first_name}} {{.Email}}</title>`},
		{"script value", `<script>var name = {{.Data.first_name}}; var n = {{.Data.emoji}};</script>`},
		{"script string dq", `<script>var s = "{{.Data.first_name}} {{.Data.sep}}";</script>`},
		{"script string sq", `<script>var s = '{{.Email}}';</script>`},
		{"script object", `<script>var d = {{.Data}};</script>`},
		{"script regexp", `<script>var r = /{{.Data.plus}}/;</script>`},
		{"script after regexp", `<script>var r = /a/ + {{.Token}};</script>`},
		{"onclick", `<button onclick="go({{.Email}})">x</button>`},
		{"onclick string", `<button onclick='go("{{.Email}}")'>x</button>`},
		{"style element", `<style>p { color: {{.Data.locale}}; }</style>`},
		{"style attr", `<p style="color: {{.Data.first_name}}">x</p>`},
		{"style url", `<p style="background: url({{.SiteURL}}/bg.png)">x</p>`},
		{"style string", `<style>p::before { content: "{{.Data.first_name}}"; }</style>`},
		{"html comment", `<!-- {{.Email}} secret -->before<!-- x -->after {{.Token}}`},
		{"attr name", `<p {{.Data.locale}}="1">x</p>`},
		{"js in script comment", `<script>// {{.Email}}
var x = 1; /* {{.Token}} */ var y = 2;</script>`},
		{"css comment", `<style>/* {{.Email}} */ p { }</style>`},
		{"text with lone lt", `a < b {{.Token}} <3 c > d`},
		{"doctype", `<!DOCTYPE html><html><body>{{.Email}}</body></html>`},
		{"script type json", `<script type="application/json">{{.Data}}</script>`},
		{"script type text", `<script type="text/template">{{.Email}}</script>`},
		{"mailto", `<a href="mailto:{{.Email}}">mail</a>`},
		{"tel href", `<a href="tel:{{.Token}}">call</a>`},
		{"uppercase tag", `<A HREF="{{.ConfirmationURL}}">x</A>`},
		{"meta content", `<meta http-equiv="refresh" content="0; url={{.ConfirmationURL}}">`},
		{"plus in text", `<p>{{.Data.plus}}</p>`},
		{"nul and separators", `<p title="{{.Data.nul}}">{{.Data.nul}} {{.Data.sep}}</p>`},
		{"backtick in attr", `<p title={{.Data.backtick}}>{{.Data.backtick}}</p>`},
	}
	for _, c := range contexts {
		add("context "+c.name+" / typical", c.template, typical, html)
		add("context "+c.name+" / hostile", c.template, hostile, both)
	}

	// Escaping errors html/template reports at Execute.
	add("error unclosed attr", `<a href="{{.SiteURL}}>x`, typical, html)
	add("error ambiguous url", `<a href="{{if .Token}}/a?{{end}}{{.Email}}">x</a>`, typical, html)
	add("error branches differ", `{{if .Token}}<a href="{{else}}<b>{{end}}x`, typical, html)
	add("error js template literal", "<script>var s = `{{.Email}}`;</script>", typical, html)
	add("error quote in unquoted attr", `<p title=a"{{.Email}}>x</p>`, typical, html)
	add("error ends in tag", `<p {{.Email}}`, typical, html)
	add("error bad attr name", `<p a"b="{{.Email}}">`, typical, html)
	add("predefined escaper html", `<p>{{.Email | html}}</p>`, hostile, both)
	add("predefined escaper html call", `<p>{{html .Email}}</p>`, hostile, both)
	add("predefined escaper urlquery in href", `<a href="/x?e={{.Email | urlquery}}">x</a>`, hostile, both)
	add("predefined escaper not last", `<p>{{.Email | html | printf "%s"}}</p>`, hostile, html)
	add("html escaper in unquoted attr", `<p title={{.Email | html}}>x</p>`, hostile, html)

	// Whitespace trimming and comments.
	add("trim both", "a  {{- .Token -}}  b", typical, both)
	add("trim newlines", "<p>\n  {{- .Token }}\n</p>\n{{- /* note */ -}}\n<p>x</p>", typical, both)
	add("trim not marker", "a {{-3}} b", typical, both)
	add("comment", "a{{/* a comment */}}b{{- /* trimmed */ -}} c", typical, both)
	add("comment multiline", "a{{/* one\ntwo */}}b", typical, both)

	// Control structures.
	add("if else if", `{{if eq .Data.locale "de"}}de{{else if eq .Data.locale "fr"}}fr{{else}}en{{end}}`, typical, both)
	add("if missing", `{{if .Data.missing}}yes{{else}}no{{end}}`, typical, both)
	add("if nested map", `{{if .Data.prefs}}{{.Data.prefs.theme}}{{end}}`, typical, both)
	add("with", `{{with .Data.first_name}}Hi {{.}}!{{else}}Hi!{{end}}`, typical, both)
	add("with empty", `{{with .Data.locale}}Hi {{.}}!{{else}}none{{end}}`, hostile, both)
	add("with dollar", `{{with .Data}}{{.first_name}} at {{$.SiteURL}}{{end}}`, typical, both)
	add("range array", `{{range .Data.tags}}[{{.}}]{{end}}`, typical, both)
	add("range index value", `{{range $i, $t := .Data.tags}}{{$i}}={{$t}} {{end}}`, typical, both)
	add("range map sorted", `{{range $k, $v := .Data}}{{$k}}:{{$v}};{{end}}`, typical, both)
	add("range map values", `{{range .Data.prefs}}{{.}}{{end}}`, typical, both)
	add("range else", `{{range .Data.none}}x{{else}}empty{{end}}`, typical, both)
	add("range over empty map", `{{range .Data}}x{{else}}empty{{end}}`, dataSets[2].json, both)
	add("range break continue", `{{range $i, $t := .Data.list}}{{if eq $i 1}}{{continue}}{{end}}{{if eq $i 3}}{{break}}{{end}}{{$t}},{{end}}`, numbers, both)
	add("range in attr", `<p class="{{range .Data.tags}}{{.}} {{end}}">x</p>`, typical, both)
	add("variables", `{{$name := .Data.first_name}}{{$name = printf "%s!" $name}}{{$name}} {{$}}`, typical, text)
	add("variable scope", `{{$x := "outer"}}{{if true}}{{$x := "inner"}}{{$x}}{{end}} {{$x}}`, typical, both)
	add("variable assign in if", `{{$x := "a"}}{{if true}}{{$x = "b"}}{{end}}{{$x}}`, typical, both)
	add("dollar root", `{{$.Email}} {{$.Data.first_name}}`, typical, both)
	add("parenthesized", `{{(.Data).first_name}} {{(index .Data.tags 1)}} {{len (print .Token .Email)}}`, typical, both)

	// Builtins.
	add("and or", `{{and .Token .Email}} {{or .Data.missing .Data.locale}} {{and .Data.missing .Email}} {{or "" 0}}`, typical, both)
	add("and or short circuit", `{{or .Token (index .Data.tags 99)}} {{and "" (index .Data.tags 99)}}`, typical, both)
	add("not", `{{not .Token}} {{not .Data.missing}} {{not 0}} {{not "x"}}`, typical, both)
	add("eq ne", `{{eq .Data.locale "fr"}} {{ne .Data.locale "fr"}} {{eq .Data.locale "de" "fr"}} {{eq 1 1}} {{eq true true}}`, typical, both)
	add("eq float data with float", `{{eq .Data.age 36.0}} {{eq .Data.frac 0.1}}`, typical, both)
	add("eq float data with int", `{{eq .Data.age 36}}`, typical, both)
	add("eq missing", `{{eq .Data.missing "x"}}`, typical, both)
	add("eq missing nil", `{{eq .Data.missing nil}}`, typical, both)
	add("lt le gt ge", `{{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1.5 2.5}} {{lt .Data.age 40.0}}`, typical, both)
	add("lt bad types", `{{lt .Data.prefs 1}}`, typical, both)
	add("lt mixed", `{{lt 1 1.5}}`, typical, both)
	add("len", `{{len .Email}} {{len .Data.tags}} {{len .Data}} {{len .Data.emoji}}`, hostile, both)
	add("len typical", `{{len .Email}} {{len .Data.tags}} {{len .Data}}`, typical, both)
	add("len of number", `{{len .Data.age}}`, typical, both)
	add("len of missing", `{{len .Data.missing}}`, typical, both)
	add("index", `{{index .Data "first_name"}} {{index .Data.tags 0}} {{index .Data.prefs "theme"}} {{index .Data "missing"}}`, typical, both)
	add("index nested", `{{index .Data "prefs" "theme"}}`, typical, both)
	add("index out of range", `{{index .Data.tags 5}}`, typical, both)
	add("index float", `{{index .Data.tags .Data.age}}`, typical, both)
	add("index string", `{{index .Email 0}}`, typical, both)
	add("index nil", `{{index .Data.missing 0}}`, typical, both)
	add("index map int key", `{{index .Data 1}}`, typical, both)
	add("slice", `{{slice .Email 0 3}} {{slice .Data.tags 1}} {{slice .Token 2 4}}`, typical, both)
	add("slice errors", `{{slice .Email 3 1}}`, typical, both)
	add("print", `{{print .Token .Email}} {{print 1 2}} {{print "a" 1 "b"}} {{print .Data.age .Data.tags}}`, typical, both)
	add("println", `{{println .Token 1 .Data.prefs}}`, typical, both)
	add("printf verbs", `{{printf "%s|%v|%q|%x|%X|%d" .Email .Token .Email .Token .Token 42}}`, typical, both)
	add("printf widths", `{{printf "[%5s][%-5s][%05d][%-4d][%.2s][%8.3f][%x]" "ab" "ab" 42 7 "abc" 3.14159 "hi"}}`, typical, both)
	add("printf floats", `{{printf "%v %v %v %v %v %v %v %v" .Data.zero .Data.one .Data.neg .Data.frac .Data.big .Data.n123456 .Data.n1234567 .Data.huge}}`, numbers, both)
	add("printf d of float", `{{printf "%d" .Data.one}}`, numbers, both)
	add("printf missing arg", `{{printf "%s and %s" .Email}}`, typical, both)
	add("printf extra arg", `{{printf "%s" .Email .Token}}`, typical, both)
	add("printf nil", `{{printf "%s %v %d" .Data.missing .Data.missing .Data.missing}}`, typical, both)
	add("printf q unicode", `{{printf "%q %+q %x" .Data.emoji .Data.emoji .Data.emoji}}`, hostile, both)
	add("printf percent", `{{printf "100%% %s" "sure"}}`, typical, both)
	add("printf f e g", `{{printf "%f %.1f %e %g %G %.3g" .Data.third .Data.neg .Data.big .Data.small .Data.huge .Data.third}}`, numbers, both)
	add("printf t c", `{{printf "%t %t %c %U" .Data.yes .Data.no 65 0x1F600}}`, numbers, both)
	add("printf bad verb", `{{printf "%d %t %z" .Email .Email 1}}`, typical, both)
	add("printf map and slice", `{{printf "%v %s %d" .Data.prefs .Data.tags .Data.list}}`, typical, both)
	add("printf map and slice numbers", `{{printf "%v|%d|%s" .Data.list .Data.list .Data.list}}`, numbers, both)
	add("printf hash", `{{printf "%#v %#x %+d % d" .Email 255 5 5}}`, typical, both)
	add("urlquery", `{{urlquery .Email}} {{urlquery .TokenHash "x y"}} {{.SiteURL | urlquery}}`, hostile, both)
	add("html builtin", `{{html .Data.first_name}}`, hostile, text)
	add("js builtin", `{{js .Data.first_name}} {{js .Data.emoji}} {{js .Data.sep}}`, hostile, text)
	add("js builtin in script", `<script>var s = "{{js .Email}}";</script>`, hostile, html)

	// Printing values: numbers as encoding/json decodes them, maps, slices, missing keys.
	add("numbers", `{{.Data.zero}} {{.Data.one}} {{.Data.neg}} {{.Data.frac}} {{.Data.third}} {{.Data.big}} {{.Data.n123456}} {{.Data.n1234567}} {{.Data.huge}} {{.Data.e20}} {{.Data.small}} {{.Data.tiny}} {{.Data.exact53}} {{.Data.minus0}}`, numbers, both)
	add("bools and null", `{{.Data.yes}} {{.Data.no}} {{.Data.nothing}}`, numbers, both)
	add("print map", `{{.Data.prefs}} {{.Data}}`, typical, both)
	add("print slice", `{{.Data.tags}} {{.Data.list}}`, numbers, both)
	add("missing keys", `[{{.Missing}}] [{{.Data.missing}}] [{{.Data.missing.deeper}}]`, typical, both)
	add("missing in attr", `<a href="{{.Missing}}" title="{{.Data.missing}}">x</a>`, typical, both)
	add("missing in script", `<script>var x = {{.Missing}};</script>`, typical, html)
	add("null in script", `<script>var x = {{.Data.nothing}}; var y = {{.Data.list}};</script>`, numbers, html)
	add("numbers in script", `<script>var a = {{.Data.big}}, b = {{.Data.frac}}, c = {{.Data.huge}}, d = {{.Data.yes}};</script>`, numbers, html)
	add("nil data", `a{{.}}b{{.Email}}c`, "", both)
	add("nil data nested", `{{.Data.first_name}}`, "", both)
	add("nil data if", `{{if .}}x{{else}}y{{end}}`, "", both)
	add("dot string data", `<p>{{.}}</p>`, `"<b>hi</b>"`, both)
	add("dot array data", `{{range .}}{{.}} {{end}}`, `["a", 1, true]`, both)
	add("field on string", `{{.Email.Domain}}`, typical, both)
	add("field on string variable", `{{$e := .Email}}{{$e.Domain}}`, typical, both)
	add("field on nil value", `{{.Data.nothing.x}}`, numbers, both)
	add("field on number", `{{with .Data.one}}{{.x}}{{end}}`, numbers, both)
	add("field with args", `{{.Data.first_name 1}}`, typical, both)
	add("truthiness", `{{if .Data.zero}}a{{end}}{{if .Data.one}}b{{end}}{{if .Data.no}}c{{end}}{{if .Data.list}}d{{end}}{{if .Data.nothing}}e{{end}}{{if .Data.minus0}}f{{end}}{{if 0.0}}g{{end}}{{if "0"}}h{{end}}`, numbers, both)
	add("constants", `{{1}} {{1.5}} {{1e3}} {{0x1F}} {{'a'}} {{"s"}} {{true}} {{-7}} {{1_000}} {{0o17}} {{0b101}} {{2i}}`, typical, both)
	add("raw string", "{{`raw \\n text`}} {{\"esc\\t\\\"q\\\"\"}}", typical, both)

	// Parse errors.
	add("parse unclosed action", `Hello {{ .Email `, typical, both)
	add("parse unclosed action newline", "Hello {{ .Email \n more", typical, both)
	add("parse unexpected EOF", `{{if .Token}}x`, typical, both)
	add("parse unexpected end", `x{{end}}`, typical, both)
	add("parse unexpected else", `x{{else}}y`, typical, both)
	add("parse function not defined", `{{ upper .Email }}`, typical, both)
	add("parse function not defined later line", "line1\nline2 {{ .Email | title }}", typical, both)
	add("parse undefined variable", `{{ $x }}`, typical, both)
	add("parse unclosed comment", `a {{/* b`, typical, both)
	add("parse comment no delimiter", `a {{/* b */ .X}}`, typical, both)
	add("parse missing value for if", `{{if}}x{{end}}`, typical, both)
	add("parse empty action", `{{}}`, typical, both)
	add("parse bad character", `{{ .Email# }}`, typical, both)
	add("parse unterminated string", `{{ "abc }}`, typical, both)
	add("parse non executable", `{{ .Email | "x" }}`, typical, both)
	add("parse bad number", `{{ 12ab }}`, typical, both)
	add("parse break outside range", `{{break}}`, typical, both)
	add("parse unclosed paren", `{{ (len .Email }}`, typical, both)
	add("parse unexpected right paren", `{{ len .Email) }}`, typical, both)
	add("parse else after end", `{{if .X}}a{{else}}b{{else}}c{{end}}`, typical, both)
	add("parse range too many decls", `{{range $a, $b, $c := .X}}{{end}}`, typical, both)
	add("parse unexpected in operand", `{{ .Email := 1 }}`, typical, both)
	add("parse dot after term", `{{ "x".y }}`, typical, both)
	add("parse unclosed action multiline", "{{ if\n .Email \n", typical, both)

	// Execution errors.
	add("exec wrong arg count", `{{ len }}`, typical, both)
	add("exec wrong arg count not", `{{ not 1 2 }}`, typical, both)
	add("exec wrong arg count eq", `{{ eq 1 }}`, typical, both)
	add("exec eq incompatible", `{{ eq .Token 1 }}`, typical, both)
	add("exec nil command", `{{ nil }}`, typical, both)
	add("exec printf format not string", `{{ printf .Data.age }}`, typical, both)
	add("exec printf format missing", `{{ printf .Data.missing }}`, typical, both)
	add("exec argument to non-function", `{{ .Email | .Token }}`, typical, both)
	add("exec error on later line", "ok\n{{ index .Data.tags 9 }}", typical, both)
	add("exec error inside range", "{{range .Data.tags}}\n  {{.x}}\n{{end}}", typical, both)
	add("exec percent in name context", `{{ index .Data "100%" 1 }}`, typical, both)

	// More contexts: attribute values interrupted by actions, branches inside tags, JavaScript
	// and CSS states, end tags inside literals.
	more := []struct{ name, template string }{
		{"entity quote in onclick", `<button onclick="f(&quot;{{.Email}}&quot;)">x</button>`},
		{"if inside attr value", `<a class="{{if .Token}}on{{else}}off{{end}}" href="{{.SiteURL}}">x</a>`},
		{"if around attribute", `<input {{if .Token}}checked{{end}} value="{{.Token}}">`},
		{"unquoted if", `<p title={{if .Token}}{{.Token}}{{end}}>x</p>`},
		{"href query then fragment", `<a href="{{.SiteURL}}?a={{.Token}}#{{.Email}}">x</a>`},
		{"href javascript scheme text", `<a href="javascript:{{.Email}}">x</a>`},
		{"href relative", `<a href="/{{.TokenHash}}/x">x</a>`},
		{"href with entity", `<a href="/p?a=1&amp;b={{.Email}}">x</a>`},
		{"img onerror unquoted", `<img src=x onerror={{.Email}}>`},
		{"data url attr", `<div data-url={{.RedirectTo}}>x</div>`},
		{"srcdoc", `<iframe srcdoc="{{.Data.first_name}}"></iframe>`},
		{"xmlns attr", `<svg xmlns:xlink="{{.SiteURL}}"></svg>`},
		{"namespaced tag", `<svg:rect width="{{.Token}}"></svg:rect><my-el a="{{.Email}}"></my-el>`},
		{"script end tag in string", `<script>var s = "</script>";</script><p>{{.Email}}</p>`},
		{"script division", `<script>var a = b / {{.Token}} / 2;</script>`},
		{"script value then slash", `<script>var a = {{.Token}}/2;</script>`},
		{"script return regexp", `<script>function f(){ return /{{.Email}}/.test(x) }</script>`},
		{"script array", `<script>var l = {{.Data.list}}, t = {{.Data.tags}}, p = {{.Data.prefs}};</script>`},
		{"script numbers", `<script>var n = [{{.Data.tiny}}, {{.Data.huge}}, {{.Data.minus0}}, {{.Data.third}}, {{.Data.exact53}}];</script>`},
		{"script range", `<script>var xs = [{{range .Data.tags}}{{.}}, {{end}}];</script>`},
		{"script if", `<script>var x = {{if .Token}}{{.Token}}{{else}}null{{end}};</script>`},
		{"script line comment end", "<script>var a = 1; // note {{.Email}}\nvar b = {{.Token}};</script>"},
		{"script html comment", `<script><!-- var a = {{.Token}}; --></script>`},
		{"script type module", `<script type="module">import x from {{.SiteURL}};</script>`},
		{"script uppercase", `<SCRIPT>var a = {{.Email}};</SCRIPT>`},
		{"style url quoted", `<style>body { background: url('{{.SiteURL}}/bg.png') }</style>`},
		{"style url unquoted element", `<style>body { background: url({{.SiteURL}}) }</style>`},
		{"style value in attr", `<p style="width: {{.Token}}px; color: {{.Data.locale}}">x</p>`},
		{"style expression", `<p style="x: {{.Data.first_name}}">x</p>`},
		{"textarea end tag", `<textarea>a</textarea >{{.Email}}<textarea>{{.Token}}</TEXTAREA>`},
		{"title with lt", `<title>a < b {{.Email}}</title>`},
		{"lowercase doctype", `<!doctype html><p>{{.Email}}</p>`},
		{"lt before letters in text", `x <y and z> {{.Token}} 1<2`},
		{"comment inside attr", `<p title="<!-- {{.Email}} -->">x</p>`},
		{"comment then tag", `<!-- a --><a href="{{.SiteURL}}">x</a><!---->{{.Token}}`},
		{"attr without value then action", `<input disabled value="{{.Token}}">`},
		{"space around equals", `<a href = "{{.SiteURL}}" title = {{.Email}}>x</a>`},
		{"empty unquoted value", `<input value={{.Data.locale}}>`},
		{"tag name from action", `<{{.Data.locale}}>`},
		{"range in href", `<a href="/t?{{range .Data.tags}}t={{.}}&{{end}}">x</a>`},
		{"with in attr", `<a title="{{with .Data.first_name}}{{.}}{{else}}anon{{end}}">x</a>`},
		{"range map in html", `{{range $k, $v := .Data.prefs}}<a href="/{{$k}}">{{$v}}</a>{{end}}`},
		{"range break in html", `<ul>{{range $i, $t := .Data.tags}}{{if eq $i 1}}{{break}}{{end}}<li>{{$t}}</li>{{end}}</ul>`},
		{"else if chain", `{{if not .Token}}none{{else if eq .Data.plan "pro"}}<b>{{.Data.plan}}</b>{{else if .Data.plan}}{{.Data.plan}}{{else}}free{{end}}`},
		{"subject with token", `Your code is {{ .Token }} for {{ .Email }}`},
		{"trim with comment only", "{{- /* only a comment */ -}}"},
		{"printf in attr", `<a href="{{printf "%s/verify?t=%s" .SiteURL .TokenHash}}">x</a>`},
		{"urlquery in query", `<a href="{{.SiteURL}}/x?next={{urlquery .RedirectTo}}">x</a>`},
		{"html in attr", `<p title="{{html .Email}}">x</p>`},
	}
	for _, c := range more {
		add("context "+c.name+" / typical", c.template, typical, html)
		add("context "+c.name+" / hostile", c.template, hostile, both)
	}
	add("context numbers in script", `<script>var n = [{{.Data.tiny}}, {{.Data.huge}}, {{.Data.minus0}}, {{.Data.third}}, {{.Data.exact53}}, {{.Data.big}}];</script>`, numbers, html)
	add("error regexp ambiguous slash", `<script>var a = {{if .Token}}x{{else}}/y/{{end}} / 2</script>`, typical, html)
	add("error range reentry", `{{range .Data.tags}}<a href="{{.}}{{end}}`, typical, html)
	add("error unfinished js string", `<script>var s = "a\</script>`, typical, html)
	add("error ends in script", `<script>var a = {{.Token}};`, typical, html)
	add("error break context", `{{range .Data.tags}}<a href="{{if .}}{{break}}{{end}}">x</a>{{end}}`, typical, html)

	// More printf, numbers and builtins.
	add("printf floats widths", `{{printf "[%6.2f][%-8v][%+v][%08.3f][%e][%g][%g][%.0f][%.0f][%.0f][%5.1f][%v][%v]" .Data.third .Data.one .Data.neg .Data.neg .Data.zero .Data.n123456 .Data.big 0.5 1.5 2.5 9.96 .Data.small 123456789.0}}`, numbers, both)
	add("printf ints", `{{printf "[%5d][%-5d|][%x][%X][%o][%O][%b][%#o][%#b][%c][%q][%U][%#U][%08b]" 42 -42 255 255 8 8 5 8 5 0x263A 65 0x263A 0x263A 5}}`, typical, both)
	add("printf strings", `{{printf "[%10.4v][%-10s][%.3q][%#q][%x][% x][%#x][%X][%s][%5t]" .Email .Token .Email "back" .Token .Token .Token "hi" .Data.yes false}}`, numbers, both)
	add("printf indexes", `{{printf "%[2]s %[1]s %s" "a" "b"}} {{printf "%*d|%-*d" 5 1 3 2}} {{printf "%[3]s" "a"}} {{printf "%"}} {{printf "%!"}}`, typical, both)
	add("printf uint8", `{{printf "%d %c %v %x %q" (index .Email 0) (index .Email 1) (index .Email 2) (index .Email 3) (index .Email 0)}}`, typical, both)
	add("printf T", `{{printf "%T %T %T %T %T %T %T" .Email .Data.age .Data .Data.tags 1 (index .Email 0) nil}}`, typical, both)
	add("printf sharp v", `{{printf "%#v|%#v|%#v|%#v|%+v" .Data.prefs .Data.tags .Data.age .Data.yes .Data.list}}`, numbers, both)
	add("printf width on map", `{{printf "%6v|%-4s|" .Data.prefs .Data.tags}}`, typical, both)
	add("printf bad width", `{{printf "%*d" "x" 1}}`, typical, both)
	add("numbers more", `{{printf "%v %v %v %v %v %v" 1e100 123456789012.0 0.000001 100000.0 1e-4 0.0001234}}`, typical, both)
	add("print mixed", `{{print "a" 1 2 "b" 3.5 true nil}}|{{println}}|{{print}}`, typical, both)
	add("len multibyte", `{{len .Data.emoji}} {{len .Data.first_name}}`, hostile, both)
	add("slice three indexes", `{{slice .Data.list 1 2 3}} {{slice .Data.list 0 4}} {{len (slice .Data.list 0 4)}} {{slice .Data.list 3}}`, numbers, both)
	add("slice beyond cap", `{{slice .Data.list 0 9}}`, numbers, both)
	add("slice string three", `{{slice .Email 1 2 3}}`, typical, both)
	add("index nested list", `{{index .Data.list 1}} {{index .Data "list" 2}} {{index .Data.list 3}}`, numbers, both)
	add("index past len", `{{index .Data.list 5}}`, numbers, both)
	add("index at len", `{{index .Data.tags 2}}`, typical, both)
	add("eq uint8 int", `{{eq (index .Email 0) 97}} {{lt (index .Email 0) 98}} {{eq 97 (index .Email 0)}}`, typical, both)
	add("eq maps", `{{eq .Data.prefs .Data.prefs}}`, typical, both)
	add("eq map slice", `{{eq .Data.prefs .Data.tags}}`, typical, both)
	add("eq nil nil", `{{eq nil nil}} {{eq .Missing .Other}}`, typical, both)
	add("ne values", `{{ne .Data.age 36.0}} {{ne "a" "b"}}`, typical, both)
	add("and or values", `{{and 1 "x" .Data.prefs}} {{or 0 "" .Data.tags}} {{and .Data.list 0}} {{or}}`, numbers, both)
	add("not map", `{{not .Data.prefs}} {{not .Data}} {{not .Missing}}`, typical, both)
	add("call builtin", `{{call .Data.first_name}}`, typical, both)
	add("call nil", `{{call .Missing}}`, typical, both)
	add("chain on function", `{{(index .Data "prefs").theme}}`, typical, both)
	add("field on slice", `{{.Data.tags.x}}`, typical, both)
	add("deep missing chain", `{{.Data.prefs.theme.x}}`, typical, both)
	add("variable field chain", `{{$d := .Data}}{{$d.prefs.theme}} {{$d.missing}}`, typical, both)
	add("range over string", `{{range .Email}}x{{end}}`, typical, both)
	add("range over number", `{{range .Data.age}}x{{end}}`, typical, both)
	add("range nil data", `{{range .}}x{{else}}none{{end}}`, "", both)
	add("with assignment", `{{with $x := .Data.first_name}}{{$x}}{{.}}{{end}}`, typical, both)
	add("if with assignment scope", `{{if $x := .Token}}{{$x}}{{end}}`, typical, both)
	add("assign outer in range", `{{$n := 0}}{{range .Data.tags}}{{$n = .}}{{end}}{{$n}}`, typical, both)
	add("pipeline to function", `{{.Email | printf "%s!"}} {{"x" | print "a" 1}} {{.Data.tags | len}}`, typical, both)
	add("parenthesized args", `{{printf "%d-%s" (len .Data.tags) (index .Data.tags 0)}}`, typical, both)

	// More parse errors.
	add("parse empty pipe stage", `{{ .Email | }}`, typical, both)
	add("parse variable out of scope", `{{with $x := 1}}{{end}}{{$x}}`, typical, both)
	add("parse bad escape", `{{"\z"}}`, typical, both)
	add("parse bad char constant", `{{'ab'}}`, typical, both)
	add("parse float out of range", `{{1e400}}`, typical, both)
	add("parse integer overflow", `{{99999999999999999999}}`, typical, both)
	add("parse bad hex", `{{0x}}`, typical, both)
	add("parse else if in range", `{{range .X}}a{{else if .Y}}b{{end}}`, typical, both)
	add("parse assign to undeclared", `{{$x = 1}}`, typical, both)
	add("parse unexpected keyword", `{{ .Email else }}`, typical, both)
	add("parse long token", `{{ .Email "abcdefghijklmnop" ( }}`, typical, both)
	add("parse unrecognized char", `{{ .Email ~ }}`, typical, both)
	add("parse non-ascii bad", `{{ .Emailé! }}`, typical, both)
	add("parse continue outside", `{{if .X}}{{continue}}{{end}}`, typical, both)
	add("parse colon", `{{ $x : 1 }}`, typical, both)
	add("parse comment in action", `{{ .X /* c */ }}`, typical, both)
	add("parse trim without space", `{{-.Token}}`, typical, both)
	add("parse number then field", `{{ 1.X }}`, typical, both)
	add("parse end with args", `{{if .X}}a{{end .Y}}`, typical, both)

	// Go's text/template and html/template with the same template, edge cases of text nodes.
	add("empty template", ``, typical, both)
	add("only text", `just text & <b>bold</b>`, typical, both)
	add("crlf", "a\r\n{{- .Token }}\r\nb", typical, both)
	add("unicode text and action", "héllo {{ .Data.emoji }} – ok", hostile, both)
	add("full html email", `<!DOCTYPE html>
<html lang="{{ .Data.locale }}">
<head>
  <meta charset="utf-8">
  <title>Confirm {{ .Email }}</title>
  <style>
    body { font-family: sans-serif; }
    .btn { background: #3ecf8e; }
  </style>
</head>
<body>
  <!-- greeting -->
  <h1>Hello {{ with .Data.first_name }}{{ . }}{{ else }}there{{ end }}</h1>
  <p><a class="btn" href="{{ .ConfirmationURL }}" target="_blank">Confirm</a></p>
  <p>Or copy this code: <code>{{ .Token }}</code></p>
  <p style="color: #666">Sent to {{ .Email }} by <a href="{{ .SiteURL }}">{{ .SiteURL }}</a></p>
</body>
</html>`, typical, both)

	// What changed in html/template and text/template between Go 1.19 and Go 1.26.
	sparse := dataSets[2].json
	changed := []struct{ name, template, data string }{
		// An empty value in an unquoted attribute is the failsafe (1.20.4).
		{"empty unquoted attr", `<td width={{.Token}} class=x>{{.Email}}</td>`, sparse},
		{"empty unquoted href", `<a href={{.SiteURL}}>x</a>`, sparse},
		{"comment in unquoted onclick", `<button onclick=a()//{{.Email}}>x</button>`, typical},
		{"comment in unquoted style", `<p style=a/*{{.Email}}*/>x</p>`, typical},
		{"empty unquoted if", `<p title={{if .Email}}{{.Email}}{{else}}{{.Token}}{{end}}>x</p>`, sparse},
		// All of JavaScript's white space is trimmed before the keyword that makes a '/' a
		// regexp (1.20.4).
		{"js nbsp before regexp", "<script>function f(){ return\u00a0/{{.Email}}/.test(x) }</script>", typical},
		{"js vertical tab before regexp", "<script>function f(){ return\v/{{.Email}}/.test(x) }</script>", hostile},
		{"js ideographic space before regexp", "<script>function f(){ return\u3000/{{.Email}}/.test(x) }</script>", hostile},
		{"js bom before regexp", "<script>function f(){ return\ufeff/{{.Email}}/.test(x) }</script>", typical},
		// '<' and '>' are no CSS value (1.20.4).
		{"css value lt", `<p style="color: {{"red<"}}">x</p>`, typical},
		{"css value gt", `<style>p { color: {{">"}} }</style>`, typical},
		{"css value data", `<p style="font-family: {{.Data.first_name}}">x</p>`, typical},
		// HTML-like comments and hashbang lines in scripts (1.21.1).
		{"js legacy comment wrapper", "<script>\n<!--\nvar t = {{.Token}};\n//-->\n</script><p>{{.Email}}</p>", typical},
		{"js close comment line", "<script>var a = 1;\n--> note {{.Email}}\nvar b = {{.Token}};</script>", typical},
		{"js hashbang", "<script>#!/usr/bin/env node\nvar a = {{.Token}};</script>", typical},
		{"js not a comment", "<script>var a = b<!c; var d = e--; var f = {{.Token}}-->1;</script>", typical},
		// Script tags inside JavaScript literals are written \x3C (1.21.1).
		{"js string with tags", "<script>var s = '<!-- <script> </SCRIPT'; var t = {{.Token}};</script>", typical},
		{"js regexp with end tag", "<script>var r = /a</script>/; var t = {{.Token}};</script>", typical},
		{"js line comment with end tag", "<script>// </script> {{.Email}}\nvar t = {{.Token}};</script>", typical},
		{"js block comment with end tag", "<script>/* </script> */ var t = {{.Token}};</script>", typical},
		// Actions in JavaScript template literals (1.22).
		{"js template literal", "<script>var s = `Hi {{.Email}}`;</script>", hostile},
		{"js template literal special", "<script>var s = `{{\"${x}`\"}}`;</script>", typical},
		{"js template literal expression", "<script>var s = `${ {{.Email}} } and ${ {a: {{.Token}}}.a }`;</script>", hostile},
		{"js template literal nested", "<script>var s = `a${ `b${ {{.Token}} }` }c{{.Data.first_name}}`;</script>", hostile},
		{"js template literal in onclick", "<button onclick=\"f(`{{.Email}}`)\">x</button>", hostile},
		{"js template literal branches", "<script>var s = `{{if .Token}}{{.Token}}{{else}}none{{end}}`;</script>", typical},
		{"js template literal brace branches", "<script>var s = `${ {{if .Token}}{ {{end}}1 }`;</script>", typical},
		{"js template literal range", "<script>var s = `{{range .Data.tags}}${ {{.}} }{{end}}`;</script>", typical},
		{"js template literal unfinished escape", "<script>var s = `a\\</script>", typical},
		// A '{' or '}' outside a template literal is JavaScript too (GO-2026-6091).
		{"js regexp after brace", `<script>if (x) {/{{.Email}}/.test(y)}</script>`, hostile},
		{"js regexp after close brace", `<script>function f(){}/{{.Email}}/.test(y)</script>`, hostile},
		// URLs in a meta element's content attribute (1.26.1, 1.26.3).
		{"meta refresh", `<meta http-equiv="refresh" content="0; url={{.ConfirmationURL}}">`, hostile},
		{"meta refresh quoted url", `<meta http-equiv="refresh" content="5;URL='{{.ConfirmationURL}}'">`, hostile},
		{"meta refresh spaces", "<meta http-equiv=\"refresh\" content=\"0;url \t= {{.ConfirmationURL}}\">", hostile},
		{"meta refresh uppercase", `<META HTTP-EQUIV="Refresh" CONTENT="0; URL={{.ConfirmationURL}}">`, hostile},
		{"meta refresh typical", `<meta http-equiv="refresh" content="0; url={{.ConfirmationURL}}">`, typical},
		{"meta content plain", `<meta name="description" content="{{.Email}} {{.ConfirmationURL}}">`, hostile},
		{"meta content after url", `<meta content="url={{.SiteURL}}; x={{.ConfirmationURL}}">`, hostile},
		{"meta content unquoted", `<meta content={{.ConfirmationURL}}><p>{{.Email}}</p>`, hostile},
		{"meta then text", `<meta charset="utf-8"><title>{{.Email}}</title><p>{{.Token}}</p>`, hostile},
		{"meta self closing", `<meta property="og:url" content="{{.SiteURL}}" /><a href="{{.ConfirmationURL}}">x</a>`, hostile},
		// An empty or blank script type is JavaScript (1.26.3).
		{"script empty type", `<script type="">var a = {{.Email}};</script>`, hostile},
		{"script blank type", `<script type=" ">var a = {{.Email}};</script>`, hostile},
		// Each {{continue}} is checked, not only the last (1.26).
		{"empty unquoted two actions", `<p title={{.Data.locale}}{{.Token}} class={{""}}>x</p>`, hostile},
		{"js comment in onclick", `<button onclick="a()<!-- {{.Email}}">x</button>`, hostile},
		{"js html comment with action", "<script>var a = 1; <!-- {{.Email}}\nvar b = {{.Token}};</script>", hostile},
		{"js template literal balanced branches", "<script>var s = `${ {{if .Token}}{a: {{.Token}}}{{else}}{a: 0}{{end}}.a }`;</script>", hostile},
		{"js template literal range braces", "<script>var s = `${ {{range .Data.tags}}{ {{end}} }`;</script>", typical},
		{"js template literal close brace in string", "<script>var s = `${ '}' + {{.Token}} }`;</script>", hostile},
		{"meta refresh trailing", `<meta http-equiv="refresh" content="0; url={{.ConfirmationURL}}; x={{.Email}}">`, hostile},
		{"meta content branches", `<meta content="{{if .Token}}url={{.SiteURL}}{{end}}">`, typical},
		{"meta content unquoted url", `<meta http-equiv=refresh content=0;url={{.ConfirmationURL}}>`, typical},
		{"continue contexts", `{{range .Data.tags}}<a href="/{{if eq . "beta"}}{{continue}}{{end}}{{.}}">x</a>{{if eq . "admin"}}{{continue}}{{end}}{{end}}`, typical},
	}
	for _, c := range changed {
		add("changed "+c.name, c.template, c.data, html)
	}
	add("changed else with", `{{with .Data.locale}}{{.}}{{else with .Data.first_name}}Hi {{.}}{{else}}Hi{{end}}`, typical, both)
	add("changed else with hostile", `{{with .Data.locale}}{{.}}{{else with .Data.first_name}}Hi {{.}}{{else}}Hi{{end}}`, hostile, both)
	add("changed else with sparse", `{{with .Data.locale}}{{.}}{{else with .Data.first_name}}Hi {{.}}{{else}}Hi{{end}}`, sparse, both)
	add("changed else with declaration", `{{with .Data.missing}}x{{else with $e := .Email}}{{$e}}{{end}}`, typical, both)
	add("changed else with in range", `{{range .Data.tags}}{{with $.Data.missing}}x{{else with $.Email}}{{.}}{{end}};{{end}}`, typical, both)
	add("changed else with in if", `{{if .Token}}a{{else with .Email}}b{{end}}`, typical, both)
	add("changed else with in range parse", `{{range .Data.tags}}a{{else with .Email}}b{{end}}`, typical, both)
	add("changed else if in with", `{{with .Data.missing}}a{{else if .Email}}b{{end}}`, typical, both)
	add("changed range uint8", `{{range $i := index .Email 0}}{{if ge $i 2}}{{break}}{{end}}{{printf "%T" $i}}{{end}}`, typical, both)
	add("changed right paren alone", `{{ ) }}`, typical, both)
	add("changed comparison types int string", `{{lt 1 "a"}}`, typical, both)
	add("changed comparison types slice", `{{eq .Data.tags 1}}`, typical, both)
	add("changed comparison types map", `{{eq .Data.prefs "x"}}`, typical, both)
	add("changed call map", `{{call .Data "x"}}`, typical, both)
	add("changed call piped", `{{.Data.tags | call}}`, typical, both)
	add("changed call piped string", `{{"x" | call}}`, typical, both)
	add("changed call parenthesized", `{{call (index .Data "first_name")}}`, typical, both)
	add("changed range assign", `{{$i := 9}}{{$t := "z"}}{{range $i, $t = .Data.tags}}{{$i}}{{$t}};{{end}} {{$i}} {{$t}}`, typical, both)
	add("changed range assign one", `{{$t := "z"}}{{range $t = .Data.tags}}{{$t}};{{end}} {{$t}}`, typical, both)
	add("changed range int", `{{range 3}}{{.}}{{end}}`, typical, both)
	add("changed range int variable", `{{range $i := 3}}{{$i}},{{end}}`, typical, both)
	add("changed range int two variables", `{{range $i, $x := 3}}{{end}}`, typical, both)
	add("changed range int zero", `{{range 0}}x{{else}}none{{end}}`, typical, both)
	add("changed range int negative", `{{range -2}}x{{else}}none{{end}}`, typical, both)
	add("changed range len", `{{range len .Data.tags}}[{{.}}]{{end}}`, typical, both)
	add("changed range int break", `{{range 5}}{{if eq . 3}}{{break}}{{end}}{{if eq . 1}}{{continue}}{{end}}{{.}}{{end}}`, typical, both)
	add("changed range int html", `<ol>{{range $i := 3}}<li class="n{{$i}}">{{$.Email}}</li>{{end}}</ol>`, hostile, both)
	add("changed range float constant", `{{range 3.0}}x{{end}}`, typical, both)
	add("changed range char constant", `{{range 'b'}}{{end}}`, typical, both)
	add("changed comparison types", `{{lt .Token 1}}`, typical, both)
	add("changed comparison types float string", `{{eq .Data.age "36"}}`, typical, both)
	add("changed comparison types bool", `{{ne .Data.yes 1}}`, numbers, both)
	add("changed comparison types ge", `{{ge .Data.one "1"}}`, numbers, both)
	add("changed comparison types eq later", `{{eq 1 1 "x"}}`, typical, both)
	add("changed comment lines", "{{/* a\nb */}}{{ .Email | nope }}", typical, both)
	add("changed comment lines trimmed", "x\n{{- /* a\n\nb */ -}}\n{{ if }}", typical, both)
	add("changed comment lines exec", "{{/* a\nb */}}\n{{ index .Data.tags 5 }}", typical, both)
	add("changed call message", `{{call .Email 1}}`, typical, both)
	add("changed right paren", `{{ print (1)) }}`, typical, both)
	return cs
}

func init() {
	// The corpus is written with Unix newlines; keep it that way whatever the checkout did.
	for i := range emailTemplates {
		emailTemplates[i].template = strings.ReplaceAll(emailTemplates[i].template, "\r\n", "\n")
	}
}
